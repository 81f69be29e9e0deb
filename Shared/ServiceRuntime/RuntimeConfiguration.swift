import Configuration
import InternalProtocol
import Logging
import PostgresSupport

/// The settings every process reads once at start-up.
///
/// Configuration keys (environment variable names; the reader is scoped to `baas`):
/// - `BAAS_BIND_HOST`: address the internal and operations servers bind (default `127.0.0.1`).
/// - `BAAS_RPC_PORT`: this service's internal HTTP/2 port (default per service, 8101…8106; 0 picks one).
/// - `BAAS_OPS_PORT`: this process's plain-HTTP `/health`, `/ready`, `/metrics` port (default 9100…9106).
/// - `BAAS_PEER_<SERVICE>_URL`: base URL of a peer's internal port, e.g. `BAAS_PEER_USERS_URL`
///   (default `https://127.0.0.1:<its default port>`).
/// - `BAAS_PKI_DIR`: folder with `ca.pem` and `<executable>.pem` / `<executable>-key.pem` (default `.local/pki`).
/// - `BAAS_INTERNAL_TIMEOUT_MS`: deadline of an internal call when the caller sets none (default 10000).
/// - `BAAS_INTERNAL_CONNECT_TIMEOUT_MS`: how long opening a connection to a peer (TCP and TLS) may
///   take (default 5000).
/// - `BAAS_READINESS_TIMEOUT_MS`: how long a readiness check waits for the database (default 1000).
/// - `BAAS_MIGRATE_ON_START`: apply the service's migrations before serving (default true).
/// - `BAAS_POSTGRES_HOST`, `_PORT`, `_USER`, `_PASSWORD`, `_DATABASE`, `_MAX_CONNECTIONS`.
/// - `BAAS_LOG_LEVEL`: trace, debug, info, notice, warning, error or critical (default info).
package struct RuntimeConfiguration: Sendable {
    /// The service this process runs.
    package var service: ServiceName
    /// Address the internal and operations servers bind.
    package var bindHost: String
    /// Internal HTTP/2 port.
    package var rpcPort: Int
    /// Operations (health, readiness, metrics) port.
    package var opsPort: Int
    /// Base URLs of every backend's internal port.
    package var peers: [ServiceName: String]
    /// Where the internal CA and this service's certificate are.
    package var pkiDirectory: String
    /// Default internal call deadline in milliseconds.
    package var internalTimeoutMilliseconds: Int
    /// How long opening a connection to a peer may take, in milliseconds.
    package var connectTimeoutMilliseconds: Int
    /// How long a readiness check waits for the database, in milliseconds.
    package var readinessTimeoutMilliseconds: Int
    /// Whether to apply migrations before serving.
    package var migrateOnStart: Bool
    /// The database.
    package var database: DatabaseConfiguration
    /// Log level.
    package var logLevel: Logger.Level
    /// The gateway's public base URL as file URLs start with (`BAAS_FILES_PUBLIC_URL`, read by
    /// every service: rows answer their `FILE_REF` columns as URLs), without a trailing slash.
    package var filesPublicURL: String
    /// The reader scoped to `baas`, for the keys of one service (`BAAS_USERS_…`), which the
    /// service reads once while it registers.
    package let reader: ConfigReader

    /// Reads the configuration of `service` from `reader`.
    package init(service: ServiceName, reader: ConfigReader) {
        let baas = reader.scoped(to: "baas")
        self.reader = baas
        self.service = service
        bindHost = baas.string(forKey: "bindHost", default: "127.0.0.1")
        rpcPort = baas.int(forKey: "rpcPort", default: Self.defaultRPCPort(service))
        opsPort = baas.int(forKey: "opsPort", default: Self.defaultOpsPort(service))
        peers = Dictionary(
            uniqueKeysWithValues: ServiceName.backends.map { peer in
                let key = ConfigKey(["peer", peer.rawValue, "url"])
                return (peer, baas.string(forKey: key, default: "https://127.0.0.1:\(Self.defaultRPCPort(peer))"))
            })
        pkiDirectory = baas.string(forKey: "pkiDir", default: ".local/pki")
        internalTimeoutMilliseconds = baas.int(forKey: "internalTimeoutMs", default: 10_000)
        connectTimeoutMilliseconds = baas.int(forKey: "internalConnectTimeoutMs", default: 5_000)
        readinessTimeoutMilliseconds = baas.int(forKey: "readinessTimeoutMs", default: 1_000)
        migrateOnStart = baas.bool(forKey: "migrateOnStart", default: true)
        database = Self.readDatabase(baas.scoped(to: "postgres"))
        database.statementTimeoutMilliseconds = baas.scoped(to: "postgres").int(
            forKey: "statementTimeoutMs", default: internalTimeoutMilliseconds + 5_000)
        logLevel = Logger.Level(rawValue: baas.string(forKey: "logLevel", default: "info")) ?? .info
        var publicURL = Substring(
            baas.string(forKey: ConfigKey(["files", "publicUrl"]), default: "http://localhost:8080"))
        while publicURL.hasSuffix("/") { publicURL = publicURL.dropLast() }
        filesPublicURL = String(publicURL)
    }

    /// Reads the PostgreSQL keys.
    static func readDatabase(_ reader: ConfigReader) -> DatabaseConfiguration {
        DatabaseConfiguration(
            host: reader.string(forKey: "host", default: "127.0.0.1"),
            port: reader.int(forKey: "port", default: 5432),
            username: reader.string(forKey: "user", default: "baas"),
            password: reader.string(forKey: "password", isSecret: true),
            database: reader.string(forKey: "database", default: "baas"),
            maximumConnections: reader.int(
                forKey: "maxConnections", default: DatabaseConfiguration.defaultMaximumConnections),
            preparedStatementsPerConnection: reader.int(forKey: "preparedStatements", default: 100))
    }

    /// The internal port a service listens on unless configured.
    package static func defaultRPCPort(_ service: ServiceName) -> Int {
        8100 + (ServiceName.allCases.firstIndex(of: service) ?? 0)
    }

    /// The operations port a process listens on unless configured.
    package static func defaultOpsPort(_ service: ServiceName) -> Int {
        9100 + (ServiceName.allCases.firstIndex(of: service) ?? 0)
    }
}

extension ConfigReader {
    /// The standard provider order: environment variables over built-in defaults.
    package static func fromEnvironment(_ environment: [String: String]? = nil) -> ConfigReader {
        if let environment {
            return ConfigReader(provider: EnvironmentVariablesProvider(environmentVariables: environment))
        }
        return ConfigReader(provider: EnvironmentVariablesProvider())
    }
}
