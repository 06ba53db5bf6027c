/** Example operations for update sessions, on session ids the simulator seeds (demo mode). */
// The data module only: importing the simulator's entry point would pull its server in.
import { SESSION_IDS } from '../simulator/content-library-data.js';
import type { ExampleOperation } from './index.js';

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

export const updateSessionExamples: ExampleOperation[] = [
  { name: 'Update session files', query: updateSessionFiles.trim(), variables: { id: SESSION_IDS.mixed } },
  { name: 'Update session entity', query: updateSession.trim(), variables: { id: SESSION_IDS.ready } },
];
