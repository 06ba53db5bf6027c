/** Example operations for update sessions. */
import type { ExampleOperation } from './example-operation.js';

/** Sessions to open the examples on: one with files of every kind, one whose files are all ready. */
export interface ExampleSessionIds {
  readonly withFiles: string;
  readonly ready: string;
}

/** What the variables hold when no session ids are known: the id of one of your sessions. */
export const SESSION_ID_PLACEHOLDER = '<an update session id of your content library>';

const updateSessionFiles = /* GraphQL */ `
# Every field of every file. The failed file's errorMessage nests three messages deep (l > l > l).
query UpdateSessionFiles($id: ID!) {
  updateSessionFiles(updateSessionId: $id) {
    name
    sourceType
    upstreamSourceType
    status
    size
    bytesTransferred
    keepInStorage
    checksumInfo {
      algorithm
      checksum
    }
    sourceEndpoint {
      ...Endpoint
    }
    uploadEndpoint {
      ...Endpoint
    }
    errorMessage {
      id
      defaultMessage
      localized
      args
      params {
        ...Param
        value {
          l {
            id
            params {
              ...Param
              value {
                l {
                  id
                  params {
                    ...Param
                    value {
                      l {
                        id
                        params {
                          ...Param
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

fragment Endpoint on TransferEndpoint {
  uri
  scheme
  sslCertificateThumbprint
}

fragment Param on LocalizableMessageParam {
  key
  value {
    dt
    s
    d
    precision
    format
    i
  }
}
`;

const updateSession = /* GraphQL */ `
# The update session entity: what a federation router resolves for UpdateSession references.
query UpdateSession($id: ID!) {
  updateSession(id: $id) {
    id
    files {
      name
      sourceType
      status
      size
      bytesTransferred
      checksumInfo {
        algorithm
        checksum
      }
    }
  }
}
`;

export function updateSessionExamples(ids?: ExampleSessionIds): ExampleOperation[] {
  return [
    { name: 'Update session files', query: updateSessionFiles.trim(), variables: { id: ids?.withFiles ?? SESSION_ID_PLACEHOLDER } },
    { name: 'Update session entity', query: updateSession.trim(), variables: { id: ids?.ready ?? SESSION_ID_PLACEHOLDER } },
  ];
}
