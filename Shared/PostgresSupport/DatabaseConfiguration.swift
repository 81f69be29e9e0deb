import Logging
import NIOCore
import PostgresNIO

/// Where and how to reach PostgreSQL.
package struct DatabaseConfiguration: Sendable, Equatable {
    /// Host name or address; a path starting with `/` means a Unix socket directory.
    package var host: String
    /// TCP port (also the socket file's suffix).
    package var port: Int
    /// Role to log in as.
    package var username: String
    /// Password, if the server asks for one.
    package var password: String?
    /// Database name.
    package var database: String
    /// Most connections the pool opens.
    package var maximumConnections: Int
    /// Named statements each connection keeps prepared (0: none).
    package var preparedStatementsPerConnection: Int
    /// The longest a pooled connection's statement may run, in milliseconds (0: no limit): set
    /// a little past the call deadline, since an answer after it reaches no one and a statement
    /// left running after its caller's 504 kept a backend busy for half a minute (second probe, F8).
    package var statementTimeoutMilliseconds: Int = 0

    /// The default pool size: four connections per core the process may use, at least 4 and at
    /// most 20. Beyond that, queries wait in PostgreSQL rather than in the pool, and each
    /// connection is a backend process holding its own caches and prepared plans (measured on two
    /// cores: 8 connections instead of 20 served GET by id 8 % faster, and data-service's peak
    /// resident set under load fell from 159 to 99 MiB).
    package static var defaultMaximumConnections: Int {
        min(20, max(4, 4 * System.coreCount))
    }

    /// Creates a configuration.
    package init(
        host: String, port: Int, username: String, password: String?, database: String,
        maximumConnections: Int = Self.defaultMaximumConnections, preparedStatementsPerConnection: Int = 100
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.database = database
        self.maximumConnections = maximumConnections
        self.preparedStatementsPerConnection = preparedStatementsPerConnection
    }

    /// The same server and credentials, another database.
    package func with(database: String) -> DatabaseConfiguration {
        var copy = self
        copy.database = database
        return copy
    }

    /// The PostgresNIO client configuration.
    package var clientConfiguration: PostgresClient.Configuration {
        var configuration: PostgresClient.Configuration
        if host.hasPrefix("/") {
            configuration = .init(
                unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: username, password: password,
                database: database)
        } else {
            configuration = .init(
                host: host, port: port, username: username, password: password, database: database, tls: .disable)
        }
        configuration.options.minimumConnections = 0
        configuration.options.maximumConnections = maximumConnections
        if statementTimeoutMilliseconds > 0 {
            configuration.options.additionalStartupParameters = [
                ("statement_timeout", "\(statementTimeoutMilliseconds)")
            ]
        }
        return configuration
    }
}

extension DatabaseConfiguration {
    /// The same server as a single connection's configuration (outside the pool).
    package var connectionConfiguration: PostgresConnection.Configuration {
        if host.hasPrefix("/") {
            return .init(
                unixSocketPath: "\(host)/.s.PGSQL.\(port)", username: username, password: password, database: database)
        }
        return .init(host: host, port: port, username: username, password: password, database: database, tls: .disable)
    }
}

extension PostgresClient {
    /// Gives a pool whose `run()` was just started a moment to start: PostgresNIO warns when a
    /// connection is leased before `run()` is under way, and offers no way to wait for it.
    package static func settle() async {
        try? await Task.sleep(for: .milliseconds(20))
    }

    /// Creates a client for a configuration.
    package convenience init(_ configuration: DatabaseConfiguration, logger: Logger) {
        self.init(configuration: configuration.clientConfiguration, backgroundLogger: logger)
    }

    /// Runs the pool for the duration of `body`, for commands that are not long-lived services.
    package static func with<Result: Sendable>(
        _ configuration: DatabaseConfiguration, logger: Logger,
        _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(configuration, logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            await PostgresClient.settle()
            return try await body(client)
        }
    }
}
