import InternalProtocol
import Logging
import NIOCore
import PostgresNIO
import PostgresSupport

/// A logical replication slot decoding the database's write-ahead log for ``ChangeRecord``s
/// through the SQL interface. The `pgoutput` plugin with a publication of no tables hands out
/// only the logical messages writes emit (``ChangeEvents``), each transaction's once it has
/// committed, in commit order. Reading is a peek followed by an advance, so a reader that dies
/// between the two loses nothing: the next one reads the same records again. Needs
/// `wal_level = logical` and a role with `REPLICATION`.
package struct ChangeSlot: Sendable {
    /// The publication the decoder reads through (created by the catalog's migrations).
    package static let publication = "baas_changes"

    /// The slot's name.
    package let name: String
    let connection: PostgresConnection
    let logger: Logger

    /// The slot that serves the database `connection` is on: slots are named across the whole
    /// cluster, so the name is derived from the database's.
    package static func shared(on connection: PostgresConnection, logger: Logger) async throws -> ChangeSlot {
        let rows = try await connection.query(
            "SELECT 'baas_changes_' || left(md5(current_database()), 24)", logger: logger)
        var name = ""
        for try await value in rows.decode(String.self) { name = value }
        return ChangeSlot(name: name, connection: connection, logger: logger)
    }

    /// Creates a slot that lives as long as `connection` (for tests).
    package static func temporary(on connection: PostgresConnection, logger: Logger) async throws -> ChangeSlot {
        let name = "baas_tmp_" + (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
        try await connection.run(
            "SELECT pg_create_logical_replication_slot(\(name)::name, 'pgoutput', true)", logger: logger)
        return ChangeSlot(name: name, connection: connection, logger: logger)
    }

    /// Creates the slot (persistent): events committed after this returns will be read. It
    /// waits for the transactions under way to end.
    package func create() async throws {
        try await connection.run(
            "SELECT pg_create_logical_replication_slot(\(name)::name, 'pgoutput')", logger: logger)
    }

    /// What the server says of the slot: nil when there is none.
    package struct State: Sendable {
        /// The log it needs has been removed (`max_slot_wal_keep_size`): it can no longer be
        /// read and must be made anew.
        package var lost: Bool
        /// Everything before this log position has been read.
        package var confirmed: UInt64
    }

    /// The slot's state, nil when it does not exist.
    package func state() async throws -> State? {
        let rows = try await connection.query(
            """
            SELECT wal_status, (coalesce(confirmed_flush_lsn, '0/0') - '0/0'::pg_lsn)::bigint
            FROM pg_replication_slots WHERE slot_name = \(name)
            """, logger: logger)
        var state: State?
        for try await (status, confirmed) in rows.decode((String?, Int64).self) {
            state = State(lost: status == "lost", confirmed: UInt64(bitPattern: confirmed))
        }
        return state
    }

    /// Marks `tables` watched for `duration` from now: their writes emit change events until
    /// then. Run it where the slot is known to exist, so no event is emitted unread.
    package func watch(_ tables: [(app: String, table: String)], for duration: Duration) async throws {
        guard !tables.isEmpty else { return }
        try await connection.run(
            """
            INSERT INTO data.watched_tables (app_id, table_name, watched_until)
            SELECT a, t, now() + \(duration.wholeMilliseconds) * interval '1 millisecond'
            FROM unnest(\(tables.map(\.app))::text[], \(tables.map(\.table))::text[]) AS w(a, t)
            ON CONFLICT (app_id, table_name) DO UPDATE SET watched_until = greatest(data.watched_tables.watched_until, excluded.watched_until)
            """, logger: logger)
    }

    /// Whether any table is watched now.
    package func anyWatched() async throws -> Bool {
        let rows = try await connection.query(
            "SELECT EXISTS (SELECT 1 FROM data.watched_tables WHERE watched_until > now())", logger: logger)
        var watched = false
        for try await value in rows.decode(Bool.self) { watched = value }
        return watched
    }

    /// Drops the slot.
    package func drop() async throws {
        try await connection.run("SELECT pg_drop_replication_slot(\(name)::name)", logger: logger)
    }

    /// The records of transactions committed before log position `limit` (nil: all there are)
    /// not yet advanced past, oldest first, from about `records` log records at most (whole
    /// transactions). ``Batch/advance`` says how far ``advance(to:)`` may then go.
    package func peek(before limit: UInt64?, records: Int) async throws -> Batch {
        let rows = try await connection.query(
            """
            SELECT data FROM pg_logical_slot_peek_binary_changes(\(name)::name, '0/0'::pg_lsn + \(limit.map { Int64(bitPattern: $0) })::numeric,
                \(records)::int, 'proto_version', '1', 'publication_names', '\(unescaped: Self.publication)', 'messages', 'true')
            """, logger: logger)
        var decoder = Decoder()
        for try await var record in rows.decode(ByteBuffer.self) {
            decoder.take(&record)
        }
        let complete = decoder.count < records
        return Batch(
            records: decoder.records, advance: complete ? limit ?? decoder.lastCommitEnd : decoder.lastCommitEnd)
    }

    /// Marks everything before log position `position` read.
    package func advance(to position: UInt64) async throws {
        try await connection.run(
            "SELECT 1 FROM pg_replication_slot_advance(\(name)::name, '0/0'::pg_lsn + \(Int64(bitPattern: position))::numeric)",
            logger: logger)
    }

    /// The database's log position up to which everything is on disk (and decodable).
    package static func flushedPosition(on connection: PostgresConnection, logger: Logger) async throws -> UInt64 {
        let rows = try await connection.query(
            "SELECT (pg_current_wal_flush_lsn() - '0/0'::pg_lsn)::bigint", logger: logger)
        var position: Int64 = 0
        for try await value in rows.decode(Int64.self) { position = value }
        return UInt64(bitPattern: position)
    }

    /// What one peek found.
    package struct Batch: Sendable {
        /// The change records, in commit order.
        package var records: [ChangeRecord]
        /// How far the slot may advance: to the end of the last transaction read (or to the
        /// peek's limit when it read everything before it); nil when it may not move.
        package var advance: UInt64?
    }

    /// Reads `pgoutput` records: `B` (begin) carries the commit's position, `M` a logical
    /// message, `C` (commit) the end of the transaction.
    struct Decoder {
        private(set) var records: [ChangeRecord] = []
        /// How many rows the peek returned.
        private(set) var count = 0
        private(set) var lastCommitEnd: UInt64?
        private var commit: UInt64 = 0
        private var index = 0

        mutating func take(_ row: inout ByteBuffer) {
            count += 1
            switch row.readInteger(as: UInt8.self) {
            case UInt8(ascii: "B"):
                commit = row.readInteger(as: UInt64.self) ?? 0
                index = 0
            case UInt8(ascii: "M"):
                // Flags, the message's own position, then the prefix and the content.
                guard row.readInteger(as: UInt8.self) != nil, row.readInteger(as: UInt64.self) != nil,
                    let prefix = row.readNullTerminatedString(), let length = row.readInteger(as: Int32.self),
                    let content = row.readString(length: Int(length))
                else { return }
                index += 1
                if let record = ChangeRecord(
                    prefix: prefix, content: content, position: ChangePosition(commit: commit, index: index))
                {
                    records.append(record)
                }
            case UInt8(ascii: "C"):
                // Flags, the commit record's position, then the transaction's end.
                guard row.readInteger(as: UInt8.self) != nil, row.readInteger(as: UInt64.self) != nil,
                    let end = row.readInteger(as: UInt64.self)
                else { return }
                lastCommitEnd = end
            default:
                break
            }
        }
    }
}

/// One change event as it leaves the log: the app and table it concerns, its JSON (read by
/// ``ChangeEvent``) and its place in commit order.
package struct ChangeRecord: Sendable, Equatable {
    package var position: ChangePosition
    package var app: String
    package var table: String
    package var content: String

    package init(position: ChangePosition, app: String, table: String, content: String) {
        self.position = position
        self.app = app
        self.table = table
        self.content = content
    }

    /// A logical message's record when its prefix is ``ChangeEvents``' (`baas.data/{app}/{table}`).
    init?(prefix: String, content: String, position: ChangePosition) {
        let parts = prefix.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == ChangeEvents.prefix else { return nil }
        self.init(position: position, app: String(parts[1]), table: String(parts[2]), content: content)
    }
}
