/**
 * Seeded update sessions of the content library, with fixed ids tests can name. Together they
 * cover every status, source type, endpoint kind and optional field of spec 2.4 / 2.5.
 */
import { hexString, mulberry32 } from './random.js';

export interface SimulatedEndpoint {
  uri: string;
  ssl_certificate_thumbprint?: string;
}

export interface SimulatedParamValue {
  dt?: string;
  s?: string;
  d?: number;
  precision?: number;
  format?: string;
  i?: number;
  l?: { id: string; params: { key: string; value: SimulatedParamValue }[] };
}

export interface SimulatedMessage {
  id: string;
  default_message: string;
  localized?: string;
  args: string[];
  params: { key: string; value: SimulatedParamValue }[];
}

/** One file info as the `/rest` API serializes it (snake_case). */
export interface SimulatedFileInfo {
  name: string;
  source_type: string;
  size?: number;
  checksum_info?: { algorithm?: string; checksum: string };
  source_endpoint?: SimulatedEndpoint;
  upload_endpoint?: SimulatedEndpoint;
  bytes_transferred: number;
  keep_in_storage: boolean;
  status: string;
  error_message?: SimulatedMessage;
}

/** Well-known update session ids (fixed, whatever the seed). */
export const SESSION_IDS = {
  /** Every status, every source type, https/http/ds endpoints, a thumbprint, sizes above 2^31, every checksum variant, an ERROR file. */
  mixed: '6f1c2a8e-3b4d-4e5f-8a9b-0c1d2e3f4a5b',
  /** Only READY files: sizes above 2^31, checksum with and without algorithm, a NONE file without checksum. */
  ready: '0b7e4d2c-1a3f-4b5c-9d8e-7f6a5b4c3d2e',
  /** One ERROR file whose error_message nests `l` three levels deep. */
  error: 'e4a1b2c3-d4e5-4f60-8172-839a4b5c6d7e',
  /** `value: []`. */
  empty: '5e3d2c1b-0a9f-4e8d-b7c6-a5b4c3d2e1f0',
  /** A file whose status is outside the documented list (`PAUSED`). */
  unknownStatus: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  /** 150 files, for larger answers. */
  many: '3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a',
} as const;

/** A well-formed id of no session: answers 404. */
export const MISSING_SESSION_ID = '00000000-0000-4000-8000-000000000404';

const VCENTER = 'https://vcenter.example.com:443';
const hex = (n: number, length: number) => hexString(mulberry32(n), length);
const thumbprint = hex(7, 40).toUpperCase().replace(/(..)(?!$)/g, '$1:');

const pushWaiting: SimulatedFileInfo = {
  name: 'photon-5.0-x86_64.ova',
  source_type: 'PUSH',
  checksum_info: { algorithm: 'SHA256', checksum: hex(1, 64) },
  upload_endpoint: { uri: `${VCENTER}/cls/data/${SESSION_IDS.mixed}/photon-5.0-x86_64.ova` },
  bytes_transferred: 0,
  keep_in_storage: true,
  status: 'WAITING_FOR_TRANSFER',
};

const pullHttpsTransferring: SimulatedFileInfo = {
  name: 'ubuntu-22.04.4-live-server-amd64.iso',
  source_type: 'PULL',
  checksum_info: { algorithm: 'SHA1', checksum: hex(2, 40) },
  source_endpoint: {
    uri: 'https://mirror.example.org/releases/22.04/ubuntu-22.04.4-live-server-amd64.iso',
    ssl_certificate_thumbprint: thumbprint,
  },
  bytes_transferred: 1_288_490_188,
  keep_in_storage: false,
  status: 'TRANSFERRING',
};

const pullDatastoreReady: SimulatedFileInfo = {
  name: 'windows-server-2022.iso',
  source_type: 'PULL',
  size: 4_831_838_208,
  checksum_info: { checksum: hex(3, 40) }, // no algorithm: SHA-1 by default
  source_endpoint: { uri: 'ds:///vmfs/volumes/5f3e2a1b-9c8d7e6f-1a2b-001122334455/iso/windows-server-2022.iso' },
  bytes_transferred: 4_831_838_208,
  keep_in_storage: true,
  status: 'READY',
};

const unchangedReady: SimulatedFileInfo = {
  name: 'descriptor.ovf',
  source_type: 'NONE',
  size: 18_734,
  bytes_transferred: 0,
  keep_in_storage: true,
  status: 'READY',
};

const bigPushReady: SimulatedFileInfo = {
  name: 'vcsa-8.0.2.ova',
  source_type: 'PUSH',
  size: 10_737_418_240,
  checksum_info: { algorithm: 'SHA512', checksum: hex(4, 128) },
  upload_endpoint: { uri: `${VCENTER}/cls/data/${SESSION_IDS.mixed}/vcsa-8.0.2.ova` },
  bytes_transferred: 10_737_418_240,
  keep_in_storage: false,
  status: 'READY',
};

const pushValidating: SimulatedFileInfo = {
  name: 'disk-0.vmdk',
  source_type: 'PUSH',
  checksum_info: { algorithm: 'MD5', checksum: hex(5, 32) },
  upload_endpoint: { uri: `${VCENTER}/cls/data/${SESSION_IDS.mixed}/disk-0.vmdk` },
  bytes_transferred: 2_147_495_993,
  keep_in_storage: false,
  status: 'VALIDATING',
};

const ERROR_SOURCE = 'http://files.example.net/isos/centos-stream-9.iso';
const pullError: SimulatedFileInfo = {
  name: 'centos-stream-9.iso',
  source_type: 'PULL',
  source_endpoint: { uri: ERROR_SOURCE },
  bytes_transferred: 734_003_200,
  keep_in_storage: false,
  status: 'ERROR',
  error_message: {
    id: 'com.vmware.vdcs.cls-main.file_transfer_failed',
    default_message:
      "Transfer of file 'centos-stream-9.iso' failed on 3/5/24 after 3 attempts (70.0% done): connection to files.example.net:80 refused.",
    localized:
      "Transfer of file 'centos-stream-9.iso' failed on 3/5/24 after 3 attempts (70.0% done): connection to files.example.net:80 refused.",
    args: ['centos-stream-9.iso'],
    params: [
      { key: 'file', value: { s: 'centos-stream-9.iso' } },
      { key: 'when', value: { dt: '2024-03-05T14:22:31.000Z', format: 'SHORT_DATE' } },
      { key: 'progress', value: { d: 70.0, precision: 1 } },
      { key: 'attempts', value: { i: 3 } },
      {
        key: 'cause',
        value: {
          l: {
            id: 'com.vmware.vdcs.cls-main.source_unreachable',
            params: [
              { key: 'uri', value: { s: ERROR_SOURCE } },
              {
                key: 'reason',
                value: {
                  l: {
                    id: 'com.vmware.vdcs.net.connection_failed',
                    params: [
                      { key: 'host', value: { s: 'files.example.net' } },
                      {
                        key: 'detail',
                        value: {
                          l: {
                            id: 'com.vmware.vdcs.net.connection_refused',
                            params: [
                              { key: 'port', value: { i: 80 } },
                              { key: 'at', value: { dt: '2024-03-05T14:22:30.512Z' } },
                            ],
                          },
                        },
                      },
                    ],
                  },
                },
              },
            ],
          },
        },
      },
    ],
  },
};

const paused: SimulatedFileInfo = {
  name: 'rocky-9.3-x86_64-dvd.iso',
  source_type: 'PULL',
  source_endpoint: { uri: 'https://download.example.com/rocky/9.3/rocky-9.3-x86_64-dvd.iso' },
  bytes_transferred: 3_221_225_472,
  keep_in_storage: true,
  status: 'PAUSED',
};

function manyFiles(): SimulatedFileInfo[] {
  const statuses = ['READY', 'TRANSFERRING', 'WAITING_FOR_TRANSFER', 'VALIDATING'] as const;
  return Array.from({ length: 150 }, (_, i) => {
    const status = statuses[i % statuses.length] as string;
    const bytes = 2 ** 31 + i * 1_048_576;
    return {
      name: `chunk-${String(i).padStart(3, '0')}.bin`,
      source_type: 'PUSH',
      ...(status === 'READY' ? { size: bytes } : {}),
      checksum_info: { algorithm: 'SHA256', checksum: hex(100 + i, 64) },
      upload_endpoint: { uri: `${VCENTER}/cls/data/${SESSION_IDS.many}/chunk-${i}.bin` },
      bytes_transferred: status === 'WAITING_FOR_TRANSFER' ? 0 : bytes,
      keep_in_storage: i % 3 === 0,
      status,
    };
  });
}

export interface SeededUpdateSession {
  readonly id: string;
  readonly covers: string;
  readonly files: readonly SimulatedFileInfo[];
}

export const UPDATE_SESSIONS: readonly SeededUpdateSession[] = [
  {
    id: SESSION_IDS.mixed,
    covers:
      'every status (WAITING_FOR_TRANSFER, TRANSFERRING, VALIDATING, READY, ERROR), source types NONE/PUSH/PULL, https/http/ds endpoints, a thumbprint, sizes above 2^31, checksums with and without algorithm, a nested error',
    files: [pushWaiting, pullHttpsTransferring, pullDatastoreReady, unchangedReady, pushValidating, bigPushReady, pullError],
  },
  {
    id: SESSION_IDS.ready,
    covers: 'READY files only: sizes 4831838208 and 10737418240, checksum without algorithm, SHA512, a NONE file without checksum',
    files: [pullDatastoreReady, unchangedReady, bigPushReady],
  },
  { id: SESSION_IDS.error, covers: 'one ERROR file, error_message with l nested three levels deep and dt/s/d/precision/format/i params', files: [pullError] },
  { id: SESSION_IDS.empty, covers: 'no files (value: [])', files: [] },
  { id: SESSION_IDS.unknownStatus, covers: 'a file with undocumented status PAUSED, next to a READY file', files: [paused, unchangedReady] },
  { id: SESSION_IDS.many, covers: '150 PUSH files in four statuses', files: manyFiles() },
];
