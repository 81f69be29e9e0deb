import Logging
import PostgresNIO
import Synchronization

/// Statements that run again and again are parsed and planned once per pooled connection: each
/// connection keeps its own bounded set of named statements, keyed by SQL text and parameter
/// types, least recently used evicted (`DEALLOCATE`d on that connection). PostgreSQL re-plans a
/// named statement by itself when a table it reads changes; a statement whose result type no
/// longer matches its plan ("cached plan must not change result type") or whose preparation
/// failed is retired and prepared afresh under a new name.
///
/// Keep one instance per pool: connection ids are unique within a pool only (names are unique
/// in the process, so two instances over one pool are merely wasteful).
package final class PreparedStatements: Sendable {
    /// Named statements kept per connection; 0 runs every statement unnamed.
    package let perConnection: Int
    private let connections = Mutex(ConnectionTable())

    /// A cache keeping at most `perConnection` statements on each connection.
    package init(perConnection: Int = 100) {
        self.perConnection = max(0, perConnection)
    }

    /// Runs `text` with `bindings` (whose PostgreSQL types are `types`) on `connection`, the
    /// statement prepared there once unless `preparing` is false; every row collected.
    package func rows(
        _ text: String, bindings: PostgresBindings, types: [PostgresDataType], on connection: PostgresConnection,
        preparing: Bool = true, logger: Logger
    ) async throws -> [PostgresRow] {
        let key = StatementKey(text: text, types: types)
        let choice =
            preparing && perConnection > 0
            ? connections.withLock { $0.name(for: key, on: connection.id, keeping: perConnection) } : .unnamed
        guard case .named(let name, let evicted) = choice else {
            return try await connection.query(PostgresQuery(unsafeSQL: text, binds: bindings), logger: logger).collect()
        }
        if let evicted { _ = try? await connection.query("DEALLOCATE \(unescaped: evicted)", logger: logger).collect() }
        do {
            let statement = DynamicStatement.Text(name: name, sql: text, types: types)
            return try await DynamicStatement.$current.withValue(statement) {
                var rows: [PostgresRow] = []
                for try await row in try await connection.execute(DynamicStatement(bindings: bindings), logger: logger)
                {
                    rows.append(row)
                }
                return rows
            }
        } catch let error as PSQLError where Self.retires(error) {
            connections.withLock { $0.retire(key, on: connection.id) }
            throw error
        }
    }

    /// Whether `error` says the plan cached under a statement's name no longer fits the tables
    /// (SQLSTATE 0A000, "cached plan must not change result type"): running the statement again
    /// prepares it afresh.
    package static func isStalePlan(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "0A000"
    }

    /// Errors after which a name is not used again on its connection. PostgresNIO remembers a
    /// failed preparation for the name's lifetime, and a stale plan keeps failing; data errors
    /// (classes 22 and 23: a bad value, a broken constraint) leave the statement sound.
    private static func retires(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return true }
        return !(state.hasPrefix("22") || state.hasPrefix("23"))
    }
}

/// A statement's identity: PostgreSQL fixes parameter types when it prepares.
struct StatementKey: Hashable, Sendable {
    let text: String
    let types: [PostgresDataType]
}

/// The named statements of every connection the pool has lent.
struct ConnectionTable: Sendable {
    /// What to run a statement as.
    enum Choice {
        /// Under `name`, after deallocating `evicted` on the connection.
        case named(String, evicted: String?)
        /// Unnamed: parsed and planned this once.
        case unnamed
    }

    /// Connections remembered; the least recently used is forgotten beyond this (the pool
    /// closes idle connections and opens new ones under new ids).
    static let connectionLimit = 256
    /// Longer texts always run unnamed (a long `IN` list is rarely repeated).
    static let longestPrepared = 8_192
    /// Texts seen once, by hash, before any is prepared: a text that never comes back costs
    /// one round trip unnamed, where preparing it costs two. Emptied when full.
    static let doorkeeperLimit = 4_096
    private(set) var byConnection: [PostgresConnection.ID: ConnectionStatements] = [:]
    private var seenOnce = Set<Int>()
    private var clock: UInt64 = 0

    /// The name `key` runs under on `connection`.
    mutating func name(for key: StatementKey, on connection: PostgresConnection.ID, keeping limit: Int) -> Choice {
        guard key.text.utf8.count <= Self.longestPrepared else { return .unnamed }
        clock += 1
        if byConnection[connection]?.names[key] == nil, !admits(key) { return .unnamed }
        if byConnection[connection] == nil { forgetIdleConnectionIfFull() }
        return byConnection[connection, default: ConnectionStatements()].name(for: key, at: clock, keeping: limit)
    }

    /// Whether `key` was seen before; remembers it otherwise.
    private mutating func admits(_ key: StatementKey) -> Bool {
        if seenOnce.contains(key.hashValue) { return true }
        if seenOnce.count >= Self.doorkeeperLimit { seenOnce.removeAll(keepingCapacity: true) }
        seenOnce.insert(key.hashValue)
        return false
    }

    /// Stops using `key`'s current name on `connection`.
    mutating func retire(_ key: StatementKey, on connection: PostgresConnection.ID) {
        byConnection[connection]?.names[key] = nil
    }

    private mutating func forgetIdleConnectionIfFull() {
        guard byConnection.count >= Self.connectionLimit,
            let idle = byConnection.min(by: { $0.value.lastUsed < $1.value.lastUsed })?.key
        else { return }
        byConnection[idle] = nil
    }
}

/// One connection's named statements.
struct ConnectionStatements: Sendable {
    /// Names issued on one connection before it runs everything unnamed: PostgresNIO remembers
    /// every name a connection has prepared, including deallocated ones, until it closes.
    static let namesPerConnectionFactor = 16
    /// Numbers names process-wide, so caches sharing a pool never give one name two texts.
    private static let nextNumber = Atomic<Int>(0)

    struct Entry: Sendable {
        let name: String
        var lastUsed: UInt64
    }

    var names: [StatementKey: Entry] = [:]
    private(set) var lastUsed: UInt64 = 0
    private var issued = 0

    mutating func name(for key: StatementKey, at tick: UInt64, keeping limit: Int) -> ConnectionTable.Choice {
        lastUsed = tick
        if let entry = names[key] {
            names[key]?.lastUsed = tick
            return .named(entry.name, evicted: nil)
        }
        guard issued < limit * Self.namesPerConnectionFactor else { return .unnamed }
        var evicted: String?
        if names.count >= limit, let oldest = names.min(by: { $0.value.lastUsed < $1.value.lastUsed }) {
            names[oldest.key] = nil
            evicted = oldest.value.name
        }
        issued += 1
        let name = "baas_\(Self.nextNumber.add(1, ordering: .relaxed).newValue)"
        names[key] = Entry(name: name, lastUsed: tick)
        return .named(name, evicted: evicted)
    }
}

/// PostgresNIO prepares a ``PostgresPreparedStatement`` under its type's static name and SQL,
/// read in the calling task when the statement is sent; this one type serves any text by reading
/// them from a task-local set for the call.
struct DynamicStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        let name: String
        let sql: String
        let types: [PostgresDataType]
    }

    @TaskLocal static var current = Text(name: "", sql: "", types: [])

    static var name: String { current.name }
    static var sql: String { current.sql }
    static var bindingDataTypes: [PostgresDataType] { current.types }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
