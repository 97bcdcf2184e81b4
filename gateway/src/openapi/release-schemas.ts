import { artifactArchs, artifactPlatforms, releaseChannels, releaseStatuses } from '@licensing/proto';
import { int, obj, orNull, type Schema, str, time } from './schema-primitives';
import { entitlementsSchema } from './shape-schema';

// A product's releases as answers show them (routes/releases.ts), and as release.published and
// release.yanked carry them.

const id = (prefix: string) =>
  str(undefined, { pattern: `^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`, examples: [`${prefix}_01JD8Z3K6Q2W4E5R6T7Y8V9X0P`] });

const artifact = obj({
  filename: str(),
  platform: { enum: [...artifactPlatforms] },
  arch: { enum: [...artifactArchs] },
  size: int(),
  sha256: str('Hex SHA-256 of the file, computed by the server'),
  signature: orNull(str('As the vendor sent it (X-Artifact-Signature)')),
  downloads: int(),
  created_at: time(),
});

export const releaseSchemas: Record<string, Schema> = {
  Artifact: artifact,
  DownloadLink: obj({
    url: str('Where the file is, for 5 minutes (also in Location)'),
    expires_at: time(),
    size: int(),
    sha256: str(),
  }),
  UpdateCheck: {
    type: 'object',
    description: 'update_available: false alone when there is none',
    properties: {
      update_available: { type: 'boolean' },
      release: { $ref: '#/components/schemas/Release' },
      artifact: obj({
        filename: str(),
        platform: { enum: [...artifactPlatforms] },
        arch: { enum: [...artifactArchs] },
        url: str('GET it with the same credential: 303 to the file'),
        size: int(),
        sha256: str(),
        signature: orNull(str()),
      }),
    },
    required: ['update_available'],
    additionalProperties: false,
  },
  TauriUpdate: obj({
    version: str(),
    notes: str(),
    pub_date: str(),
    url: str(),
    signature: str(),
  }),
  Release: obj({
    id: id('rel'),
    product_id: id('prod'),
    version: str('Semantic Versioning 2.0.0, as given'),
    channel: { enum: [...releaseChannels], description: 'stable, beta, alpha or dev' },
    status: { enum: [...releaseStatuses], description: 'draft until published; yanked once withdrawn' },
    notes: orNull(str()),
    published_at: orNull(time()),
    yanked_at: orNull(time()),
    entitlements: entitlementsSchema,
    artifacts: { type: 'array', description: 'The files of the release', items: artifact },
    created_at: time(),
  }),
};
