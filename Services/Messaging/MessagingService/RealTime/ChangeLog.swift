import DataEngine
import InternalProtocol
import Logging
import PostgresNIO
import PostgresSupport

/// The change log every messaging-service reads data change events from. Writers emit events
/// into the write-ahead log (``ChangeEvents``); whichever instance holds the relay lock copies
/// them from the database's one logical slot into `messaging.change_log`, numbered by their
/// place in commit order, and announces them; every instance reads the log after its last
/// position. The slot exists while some table is watched; watching a table first makes sure it
/// does, under the same lock, so no event is emitted unread.
struct ChangeLog: Sendable {
    /// The PostgreSQL channel new log entries are announced on.
    static let channel = "messaging_changes"
    /// The advisory lock one relay (or one watch making the slot) holds at a time.
    static let lockKey: Int64 = 0x6261_6173_5254_0001

    let database: PostgresClient
    let logger: Logger

    /// Marks `tables` watched for `duration` from now, making the slot first when there is none.
    func watch(_ tables: [(app: String, table: String)], for duration: Duration) async throws {
        guard !tables.isEmpty else { return }
        try await database.withConnection { connection in
            try await Self.locked(on: connection, wait: true, logger: logger) {
                let slot = try await ChangeSlot.shared(on: connection, logger: logger)
                try await Self.make(slot, logger: logger)
                try await slot.watch(tables, for: duration)
            }
        }
    }

    /// Copies what the slot holds (about `records` log records at most) into the log and
    /// announces it; drops the slot once nothing is watched. Answers how many events it copied
    /// and whether it read all there was, or nil when another instance holds the lock.
    func relay(records: Int) async throws -> (events: Int, complete: Bool)? {
        try await database.withConnection { connection in
            try await Self.locked(on: connection, wait: false, logger: logger) {
                let slot = try await ChangeSlot.shared(on: connection, logger: logger)
                guard let state = try await slot.state(), !state.lost else {
                    // Only a slot the server gave up on (max_slot_wal_keep_size) can be missing while watched.
                    if try await slot.anyWatched() {
                        logger.error(
                            "real-time change slot lost: change events were missed", metadata: ["slot": "\(slot.name)"])
                        try await Self.make(slot, logger: logger)
                    }
                    return (0, true)
                }
                let flushed = try await ChangeSlot.flushedPosition(on: connection, logger: logger)
                // Nothing written since the last read: no decoding (each read logs a line and
                // walks the log from the slot's restart point).
                guard flushed > state.confirmed else {
                    if try await !slot.anyWatched() { try await slot.drop() }
                    return (0, true)
                }
                let batch = try await slot.peek(before: flushed, records: records)
                if !batch.records.isEmpty { try await append(batch.records, on: connection) }
                // A new slot may start past what is on disk yet; it never moves back.
                if let end = batch.advance, end > state.confirmed { try await slot.advance(to: end) }
                let complete = batch.advance == flushed
                if complete, try await !slot.anyWatched() { try await slot.drop() }
                return (batch.records.count, complete)
            }
        }
    }

    /// Makes the slot unless it exists and can be read.
    private static func make(_ slot: ChangeSlot, logger: Logger) async throws {
        let state = try await slot.state()
        if let state, !state.lost { return }
        if state != nil { try await slot.drop() }
        try await slot.create()
    }

    /// Runs `body` holding the relay lock on `connection` (waiting for it, or nil at once when
    /// another holds it), and releases it before the connection goes back to the pool. A wait
    /// runs without the pool's statement timeout: the holder may be making the slot, which waits
    /// for every transaction under way on the server to end, and a waiter that gave up would
    /// fail its subscription on a busy server.
    private static func locked<Result>(
        on connection: PostgresConnection, wait: Bool, logger: Logger, _ body: () async throws -> Result
    ) async throws -> Result? {
        if wait {
            try await connection.run("SET statement_timeout = 0", logger: logger)
            do {
                try await connection.run("SELECT pg_advisory_lock(\(lockKey))", logger: logger)
            } catch {
                _ = try? await connection.run("RESET statement_timeout", logger: logger)
                throw error
            }
        } else {
            let rows = try await connection.query("SELECT pg_try_advisory_lock(\(lockKey))", logger: logger)
            var acquired = false
            for try await value in rows.decode(Bool.self) { acquired = value }
            guard acquired else { return nil }
        }
        do {
            let result = try await body()
            try await release(on: connection, wait: wait, logger: logger)
            return result
        } catch {
            _ = try? await release(on: connection, wait: wait, logger: logger)
            throw error
        }
    }

    /// Releases the relay lock, and after a wait gives the connection its statement timeout back.
    private static func release(on connection: PostgresConnection, wait: Bool, logger: Logger) async throws {
        try await connection.run("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
        if wait { try await connection.run("RESET statement_timeout", logger: logger) }
    }

    /// Appends `records` (a record already there stays as it is: a relay that died before
    /// advancing the slot leaves the next one the same records) and announces them.
    private func append(_ records: [ChangeRecord], on connection: PostgresConnection) async throws {
        try await connection.run(
            """
            WITH appended AS (
                INSERT INTO messaging.change_log (commit_lsn, index, app_id, table_name, event)
                SELECT * FROM unnest(\(records.map { Int64(bitPattern: $0.position.commit) })::bigint[],
                    \(records.map { Int32($0.position.index) })::int[], \(records.map(\.app))::text[],
                    \(records.map(\.table))::text[], \(records.map(\.content))::text[])
                ON CONFLICT DO NOTHING RETURNING 1)
            SELECT pg_notify('\(unescaped: Self.channel)', '') WHERE EXISTS (SELECT 1 FROM appended)
            """, logger: logger)
    }

    // MARK: Reading

    /// Up to `limit` entries after `position`, in commit order.
    func read(after position: ChangePosition, limit: Int) async throws -> [ChangeRecord] {
        try await records(
            """
            SELECT commit_lsn, index, app_id, table_name, event FROM messaging.change_log
            WHERE (commit_lsn, index) > (\(position.storedCommit), \(Int32(position.index)))
            ORDER BY commit_lsn, index LIMIT \(limit)
            """)
    }

    /// Up to `limit` entries of `app`'s `table` after `position` up to `through`, in commit order.
    func replay(app: String, table: String, after position: ChangePosition, through: ChangePosition, limit: Int)
        async throws -> [ChangeRecord]
    {
        try await records(
            """
            SELECT commit_lsn, index, app_id, table_name, event FROM messaging.change_log
            WHERE app_id = \(app) AND table_name = \(table)
                AND (commit_lsn, index) > (\(position.storedCommit), \(Int32(position.index)))
                AND (commit_lsn, index) <= (\(through.storedCommit), \(Int32(through.index)))
            ORDER BY commit_lsn, index LIMIT \(limit)
            """)
    }

    /// The newest entry's position, or the beginning when the log is empty.
    func latest() async throws -> ChangePosition {
        let rows = try await database.query(
            "SELECT commit_lsn, index FROM messaging.change_log ORDER BY commit_lsn DESC, index DESC LIMIT 1",
            logger: logger)
        var position = ChangePosition(commit: 0, index: 0)
        for try await (commit, index) in rows.decode((Int64, Int32).self) {
            position = ChangePosition(commit: UInt64(bitPattern: commit), index: Int(index))
        }
        return position
    }

    /// Where the database's commit order stands now: a transaction that commits from now on
    /// comes after it, one that has committed before it (the log may not hold it yet).
    func now() async throws -> ChangePosition {
        let rows = try await database.query(
            "SELECT (pg_current_wal_insert_lsn() - '0/0'::pg_lsn)::bigint", logger: logger)
        var position = ChangePosition(commit: 0, index: 0)
        for try await lsn in rows.decode(Int64.self) {
            position = ChangePosition(commit: UInt64(bitPattern: lsn), index: 0)
        }
        return position
    }

    private func records(_ query: PostgresQuery) async throws -> [ChangeRecord] {
        let rows = try await database.query(query, logger: logger)
        var records: [ChangeRecord] = []
        for try await (commit, index, app, table, event) in rows.decode((Int64, Int32, String, String, String).self) {
            records.append(
                ChangeRecord(
                    position: ChangePosition(commit: UInt64(bitPattern: commit), index: Int(index)), app: app,
                    table: table, content: event))
        }
        return records
    }

    /// Deletes entries logged more than `retention` ago, resume points past their expiry and
    /// watches long expired.
    func sweep(retention: Duration) async throws {
        try await database.run(
            "DELETE FROM messaging.change_log WHERE logged_at < now() - \(retention.wholeMilliseconds) * interval '1 millisecond'",
            logger: logger)
        try await database.run("DELETE FROM messaging.rt_resume WHERE expires_at < now()", logger: logger)
        try await database.run(
            "DELETE FROM data.watched_tables WHERE watched_until < now() - interval '1 day'", logger: logger)
    }
}

extension ChangePosition {
    /// The commit position as the log stores it (a bigint holding the unsigned bits).
    var storedCommit: Int64 { Int64(bitPattern: commit) }
}
