import Logging
import PostgresNIO

/// One numbered schema change owned by a service. Applied once, in version order, inside the
/// runner's transaction.
package protocol DatabaseMigration: Sendable {
    /// Position in the owner's sequence, starting at 1; never reused.
    var version: Int { get }
    /// A short description, recorded with the version.
    var name: String { get }
    /// Applies the change on the runner's transaction connection.
    func apply(on connection: PostgresConnection, logger: Logger) async throws
}

/// A migration made of plain SQL statements without parameters.
package struct SQLMigration: DatabaseMigration {
    package let version: Int
    package let name: String
    /// The statements, run in order.
    package let statements: [String]

    /// Creates a migration from statements the project owns (never from input).
    package init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }

    package func apply(on connection: PostgresConnection, logger: Logger) async throws {
        for statement in statements {
            try await connection.run(PostgresQuery(unsafeSQL: statement), logger: logger)
        }
    }
}
