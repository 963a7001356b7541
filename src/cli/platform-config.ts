// Flags → the local platform's configuration (respgate platform and respgate dev). Loaded only by
// those roles: the vector index file is read with the platform's own loader, and the data directory
// (which keeps generated credentials in its secrets.json) is the platform's.
import { ConfigError, generateToken, type PlatformConfig } from '../config.js';
import { keepGeneratedSecrets, resolveDataDir } from '../platform/data-dir.js';
import { loadVectorConfigFile, VectorConfigError } from '../platform/vector/config.js';
import type { PlatformFlags } from './options.js';

export function platformConfig(f: PlatformFlags): PlatformConfig {
  return keepGeneratedSecrets(platformConfigOf(f), f);
}

function platformConfigOf(f: PlatformFlags): PlatformConfig {
  return {
    host: f.host,
    httpPort: f.httpPort,
    token: f.token ?? generateToken(),
    readonlyToken: f.readonlyToken ?? generateToken(),
    redisUrl: f.redisUrl,
    internalRedisUrl: f.internalRedisUrl,
    redisServerBinary: f.redisServer,
    maxRequestSize: f.maxRequestSize,
    databases: f.databases,
    dailyRequestLimit: f.dailyRequestLimit,
    logLevel: f.logLevel,
    dataDir: resolveDataDir({ dataDir: f.dataDir, ephemeral: f.ephemeral }),
    vectorToken: f.vectorToken,
    vectorIndexes: vectorIndexes(f.vectorConfig),
    vectorEmbeddingsUrl: f.vectorEmbeddingsUrl,
    vectorEmbeddingsModel: f.vectorEmbeddingsModel || undefined,
    vectorEmbeddingsKey: f.vectorEmbeddingsKey,
    queueToken: f.queueToken,
    signingKey: f.signingKey,
    nextSigningKey: f.nextSigningKey,
    queueBackoffScale: f.queueBackoffScale,
    queueMessagePrice: f.queueMessagePrice,
    queueConcurrency: f.queueConcurrency,
    accountEmail: f.accountEmail,
    accountKey: f.accountKey,
  };
}

function vectorIndexes(file: string | undefined): PlatformConfig['vectorIndexes'] {
  try {
    return file ? loadVectorConfigFile(file) : undefined;
  } catch (err) {
    if (err instanceof VectorConfigError) throw new ConfigError(err.message);
    throw err;
  }
}
