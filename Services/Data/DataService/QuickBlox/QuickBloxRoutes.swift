import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import QueryLanguage
import ServiceRuntime

/// QuickBlox's custom-objects REST API under `quickblox/`, so a client pointed at
/// `{gateway}/{appId}/{apiKey}/quickblox` sends its own paths and bodies (`data/{class}.json`,
/// `data/{class}/{id}.json`, `data/{class}/multi.json`; JSON or form bodies) and reads its own
/// answers (`_id`, `user_id`, `created_at`…). Every call goes through the data engine, so the
/// app's permissions, typing and change events are the same as on the Backendless routes.
struct QuickBloxRoutes: Sendable {
    let engine: DataEngine

    /// The largest page (`limit`) and the most ids one call names.
    static let maximumLimit = 1000
    /// The most records one create-many or update-many carries, as a bulk create.
    static let maximumRecords = 100

    func add(to router: inout PublicRoutes) {
        let many = "quickblox/data/{table}/multi.json"
        router.add(.post, many, permission: .data(.create), doc: .quickBloxCreateMany) { try await createMany($0) }
        router.add(.put, many, permission: .data(.update), doc: .quickBloxUpdateMany) { try await updateMany($0) }
        let all = "quickblox/data/{table}.json"
        router.add(.post, all, permission: .data(.create), doc: .quickBloxCreate) { try await create($0) }
        router.add(.get, all, permission: .data(.find), doc: .quickBloxList) { try await list($0) }
        let one = "quickblox/data/{table}/{id}.json"
        router.add(.get, one, permission: .data(.find), doc: .quickBloxRead) { try await read($0) }
        router.add(.put, one, permission: .data(.update), doc: .quickBloxUpdate) { try await update($0) }
        let removed = DocumentExamples.named(DocumentExamples.quickBloxRemovedID)
        router.add(.delete, one, permission: .data(.remove), doc: .quickBloxDelete.path("id", removed)) {
            try await delete($0)
        }
    }

    // MARK: Reading

    private func list(_ call: PublicCall) async throws -> Response {
        let filter = try QuickBloxFind(try call.dataQueryItems)
        if filter.countOnly {
            let count = try await engine.count(
                call.table, query: filter.query, identity: call.identity, logger: call.context.logger)
            return .json(
                .object(JSONObject([("class_name", .string(call.table)), ("items_count", .integer(Int64(count)))])))
        }
        let rows = try await filter.items(call.table, engine: engine, call: call)
        let (skip, limit) = filter.answeredBounds
        let whole = filter.whole
        return page(call.table, try rows.map { try QuickBloxRecord.record($0, whole: whole) }, skip: skip, limit: limit)
    }

    /// `{"class_name", "skip", "limit", "items"}` with the objects as QuickBlox records.
    private func page(_ table: String, _ records: [JSONValue], skip: Int, limit: Int) -> Response {
        .json(
            .object(
                JSONObject([
                    ("class_name", .string(table)), ("skip", .integer(Int64(skip))), ("limit", .integer(Int64(limit))),
                    ("items", .array(records)),
                ])))
    }

    private func read(_ call: PublicCall) async throws -> Response {
        let ids = try Self.ids(call)
        if try call.dataQueryItems.contains(where: { $0.name == "permissions" && $0.value == "1" }) {
            guard ids.count == 1 else { throw QuickBloxError.malformed("Permissions are read for one record") }
            return try await permissions(call, id: ids[0])
        }
        return page(call.table, try await objects(ids, call), skip: 0, limit: ids.count)
    }

    /// The records `ids` name that the caller may find, in the order named.
    func objects(_ ids: [String], _ call: PublicCall) async throws -> [JSONValue] {
        var query = FindQuery()
        query.condition = Self.byIDs(ids)
        query.pageSize = max(ids.count, 1)
        let rows = try await engine.find(call.table, query: query, identity: call.identity, logger: call.context.logger)
        var byID: [String: JSONValue] = [:]
        for row in rows {
            let record = try QuickBloxRecord.record(row, whole: true)
            if let id = record.object?["_id"]?.string { byID[id] = record }
        }
        return ids.compactMap { byID[$0] }
    }

    /// `{"permissions": {…}, "record_id": id}`: the record's ACL, read with the Permission right.
    private func permissions(_ call: PublicCall, id: String) async throws -> Response {
        let (cells, owner) = try await engine.objectACL(
            table: call.table, objectID: id, identity: call.identity, logger: call.context.logger)
        let permissions = QuickBloxPermissions(cells: cells, owner: owner)
        return .json(.object(JSONObject([("permissions", permissions.json), ("record_id", .string(id))])))
    }

    /// The `{id}` segment's ids (comma-separated), at most ``maximumLimit``.
    static func ids(_ call: PublicCall) throws -> [String] {
        let ids = call.parameter("id").split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        guard !ids.isEmpty, ids.count <= maximumLimit, ids.allSatisfy({ !$0.isEmpty }) else {
            throw DataError.invalidParameter("Name 1 to \(maximumLimit) record ids, comma-separated")
        }
        return ids
    }
}
