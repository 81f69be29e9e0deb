import DataEngine
import Foundation
import TestSupport

/// `OBJECTS_CHANGES` as the SDKs send it, and what a test reads back.
extension RTClient {
    /// Subscribes `id` to `event` on `table` (with `clause`).
    func subscribe(_ id: String, _ event: String, _ table: String, where clause: String? = nil) throws {
        let whereMember = clause.map { #", "whereClause": \#(JSONValue.string($0).jsonText)"# } ?? ""
        try emit(
            "SUB_ON",
            #"{"id": "\#(id)", "name": "OBJECTS_CHANGES", "options": {"event": "\#(event)", "tableName": "\#(table)"\#(whereMember)}}"#
        )
    }

    /// Waits for `SUB_READY` of every one of `ids`.
    func ready(_ ids: [String]) async throws {
        // A database's first data subscription makes its change slot, which waits for every
        // transaction under way on the server to end: with the whole suite on one server, minutes.
        try await wait(for: .seconds(240)) { events in
            ids.allSatisfy { id in
                events.contains { $0.name == "SUB_READY" && ($0.data as? [String: Any])?["id"] as? String == id }
            }
        }
    }

    /// The `data` of every `SUB_RES` for `id`, oldest first.
    func data(_ id: String) throws -> [Any] {
        try payloads("SUB_RES", id: id).compactMap { $0["data"] }
    }

    /// The integer property `name` of every object delivered to `id`.
    func integers(_ id: String, _ name: String) throws -> [Int] {
        try data(id).compactMap { ($0 as? [String: Any])?[name] as? Int }
    }
}
