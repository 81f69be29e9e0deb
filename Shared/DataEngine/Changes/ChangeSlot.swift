import Logging
import NIOCore
import PostgresNIO

/// A temporary logical replication slot decoding the database's write-ahead log for
/// ``ChangeEvent``s, through the SQL interface on one connection (which the slot lives and dies
/// with). The `pgoutput` plugin with a publication of no tables hands out only the logical
/// messages writes emit (``ChangeEvents``), each transaction's after it commits, in commit
/// order. Needs `wal_level = logical` and a role with `REPLICATION`.
public struct ChangeSlot: Sendable {
    /// The publication the decoder reads through (created by the catalog's migrations).
    public static let publication = "baas_changes"

    /// The slot's name.
    public let name: String
    let connection: PostgresConnection
    let logger: Logger

    /// Creates a slot on `connection`; events committed after this returns are read by ``read(limit:)``.
    public static func create(on connection: PostgresConnection, logger: Logger) async throws -> ChangeSlot {
        let name = "baas_rt_" + (0..<4).map { _ in String(UInt32.random(in: .min ... .max), radix: 16) }.joined()
        try await connection.query("SELECT pg_create_logical_replication_slot(\(name)::name, 'pgoutput', true)", logger: logger)
        return ChangeSlot(name: name, connection: connection, logger: logger)
    }

    /// The events committed since the last read, in commit order, from at most about `limit`
    /// log records (whole transactions), and how many records were read: fewer than `limit`
    /// means the reader has caught up.
    public func read(limit: Int) async throws -> (events: [ChangeEvent], records: Int) {
        let rows = try await connection.query(
            """
            SELECT data FROM pg_logical_slot_get_binary_changes(\(name)::name, NULL, \(limit)::int,
                'proto_version', '1', 'publication_names', '\(unescaped: Self.publication)', 'messages', 'true')
            """, logger: logger)
        var decoder = Decoder()
        for try await var record in rows.decode(ByteBuffer.self) {
            decoder.take(&record)
        }
        return (decoder.events, decoder.records)
    }

    /// Drops the slot (it also goes when the connection closes).
    public func drop() async throws {
        try await connection.query("SELECT pg_drop_replication_slot(\(name)::name)", logger: logger)
    }

    /// Reads `pgoutput` records: `B` (begin) carries the commit's position, `M` a logical message.
    struct Decoder {
        private(set) var events: [ChangeEvent] = []
        private(set) var records = 0
        private var commit: UInt64 = 0
        private var index = 0

        mutating func take(_ record: inout ByteBuffer) {
            records += 1
            switch record.readInteger(as: UInt8.self) {
            case UInt8(ascii: "B"):
                commit = record.readInteger(as: UInt64.self) ?? 0
                index = 0
            case UInt8(ascii: "M"):
                guard record.readInteger(as: UInt8.self) != nil, record.readInteger(as: UInt64.self) != nil,
                    let prefix = record.readNullTerminatedString(), prefix == ChangeEvents.prefix,
                    let length = record.readInteger(as: Int32.self), let content = record.readBytes(length: Int(length)),
                    let json = try? JSONParser.parse(content, maximumDepth: 512)
                else { return }
                index += 1
                if let event = ChangeEvent(json, position: ChangePosition(commit: commit, index: index)) { events.append(event) }
            default:
                break
            }
        }
    }
}
