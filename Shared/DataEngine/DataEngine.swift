import Foundation
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport

/// The shared data engine: app tables with dynamic schema, the query language compiled to
/// parameterised SQL, and single-statement writes that emit change events. Services hold one
/// per process; every operation takes the caller's ``Identity`` and asks ``AccessControl``.
package struct DataEngine: Sendable {
    let database: PostgresClient
    /// The process's catalog cache; ``listener`` keeps it current.
    package let cache: CatalogCache
    let locks = KeyedLock()
    let access = AccessControl()
    let logger: Logger
    /// Every statement this engine has sent.
    package let statements: StatementCounter
    /// The statements prepared on the pool's connections.
    package let prepared: PreparedStatements

    /// Creates an engine over `database`, preparing repeated statements with `prepared` (one per
    /// pool: engines over the same pool share it).
    package init(database: PostgresClient, logger: Logger, prepared: PreparedStatements = PreparedStatements()) {
        self.database = database
        self.logger = logger
        self.prepared = prepared
        let counter = StatementCounter()
        statements = counter
        let loaderSession = DatabaseSession(pool: database, logger: logger, counter: counter, prepared: prepared)
        cache = CatalogCache { appID in try await CatalogStore.load(appID: appID, session: loaderSession) }
    }

    /// The service that keeps ``cache`` in step with schema changes made anywhere.
    package var listener: NotificationListener {
        NotificationListener(database: database, channel: CatalogChannel.name, consumer: cache, logger: logger)
    }

    /// A session on the pool, logging to `logger`.
    func session(_ logger: Logger) -> DatabaseSession {
        DatabaseSession(pool: database, logger: logger, counter: statements, prepared: prepared)
    }

    func editor(_ logger: Logger) -> SchemaEditor {
        SchemaEditor(session: session(logger), cache: cache, locks: locks)
    }

    /// The app's catalog and the named table, or 1009.
    func table(_ name: String, app: String) async throws -> (AppCatalog, TableSchema) {
        let catalog = try await cache.catalog(for: app)
        guard let table = catalog.table(named: name) else { throw DataError.tableNotFound(name) }
        return (catalog, table)
    }

    /// Runs `body`, turning PostgreSQL refusals into client errors for `table`.
    func mappingErrors<Result>(table: String, logger: Logger, _ body: () async throws -> Result) async throws -> Result
    {
        do {
            return try await body()
        } catch {
            throw DatabaseErrors.map(error, table: table, logger: logger)
        }
    }

    /// A new object id: an upper-case UUID from the system's secure generator.
    static func newObjectId() -> String {
        UUID().uuidString
    }
}
