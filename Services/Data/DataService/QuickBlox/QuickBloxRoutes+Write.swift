import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import Permissions
import QueryLanguage
import ServiceRuntime

extension QuickBloxRoutes {
    // MARK: One record

    /// `POST data/{class}.json`: the created record; with `permissions`, the record and its ACL
    /// are written in one transaction.
    func create(_ call: PublicCall) async throws -> Response {
        let write = try Self.write(call)
        let logger = call.context.logger
        guard let permissions = write.permissions else {
            let row = try await engine.create(
                call.table, object: write.changes, identity: call.identity, logger: logger)
            return .json(try QuickBloxRecord.record(row, whole: true))
        }
        try await engine.prepareSchema(
            call.table, for: [write.changes], createTable: true, operation: .create, identity: call.identity,
            logger: logger)
        let (row, cells) = try await engine.transaction(identity: call.identity, logger: logger) { transaction in
            let row = try await transaction.create(call.table, object: write.changes)
            let cells = try await Self.apply(permissions, to: row, table: call.table, in: transaction)
            return (row, cells)
        }
        try await engine.catchUp(afterACLCells: cells, table: call.table, identity: call.identity, logger: logger)
        return .json(try Self.record(row, permissions: permissions))
    }

    /// `PUT data/{class}/{id}.json`: fields, update operators and permissions, in one transaction.
    func update(_ call: PublicCall) async throws -> Response {
        let write = try Self.write(call)
        let id = call.parameter("id")
        let logger = call.context.logger
        guard let permissions = write.permissions else {
            guard !write.changes.members.isEmpty else { throw QuickBloxError.malformed("The update changes nothing") }
            let row = try await engine.update(
                call.table, id: id, changes: write.changes, identity: call.identity, logger: logger)
            return .json(try QuickBloxRecord.record(row, whole: true))
        }
        if !write.changes.members.isEmpty {
            try await requireUpdatable(id, call)
            try await engine.prepareSchema(
                call.table, for: [write.changes], createTable: false, operation: .update, identity: call.identity,
                logger: logger)
        }
        let (row, cells) = try await engine.transaction(identity: call.identity, logger: logger) { transaction in
            let row =
                write.changes.members.isEmpty
                ? try await transaction.object(call.table, id: id)
                : try await transaction.update(call.table, id: id, changes: write.changes)
            let cells = try await Self.apply(permissions, to: row, table: call.table, in: transaction)
            return (row, cells)
        }
        try await engine.catchUp(afterACLCells: cells, table: call.table, identity: call.identity, logger: logger)
        return .json(try Self.record(row, permissions: permissions))
    }

    /// 1000 / 1023 unless the caller may update object `id` (before a schema change for it).
    private func requireUpdatable(_ id: String, _ call: PublicCall) async throws {
        let permits = try await engine.permits(
            .update, objectIDs: [id], table: call.table, identity: call.identity, logger: call.context.logger)
        guard permits.permitted.contains(id) else {
            guard permits.existing.contains(id) else { throw DataError.entityNotFound(id) }
            throw DataError.permissionDenied(DataOperation.update.rawValue, table: call.table)
        }
    }

    /// Writes the record's ACL cells for the operations `permissions` name; the cells written.
    private static func apply(
        _ permissions: QuickBloxPermissions, to row: String, table: String, in transaction: DataTransaction
    ) async throws -> [PermissionChange] {
        let (id, owner) = try QuickBloxRecord.ownership(row)
        guard let id else { throw ErrorEnvelope.internalError }
        let cells = permissions.access.flatMap { operation, access in
            QuickBloxPermissions.cells(access, operation: operation, owner: owner)
        }
        try await transaction.replaceObjectACL(
            table, id: id, operations: Set(permissions.access.keys), cells: cells)
        return cells
    }

    private static func record(_ row: String, permissions: QuickBloxPermissions) throws -> JSONValue {
        guard case .object(var record) = try QuickBloxRecord.record(row, whole: true) else { return .null }
        record["permissions"] = permissions.json
        return .object(record)
    }

    /// `DELETE data/{class}/{id}.json`: answers `{"SuccessfullyDeleted", "NotFound",
    /// "WrongPermissions"}`, each `{"ids": [...]}`, for one id or several (comma-separated). One
    /// id that cannot go is refused as a delete is (1000, 1023); QuickBlox answers an empty body
    /// there, which its SDKs do not read, and one answer shape keeps the description true.
    func delete(_ call: PublicCall) async throws -> Response {
        let ids = try Self.ids(call)
        let logger = call.context.logger
        guard ids.count > 1 else {
            _ = try await engine.delete(call.table, id: ids[0], identity: call.identity, logger: logger)
            return Self.deletion(removed: ids, missing: [], refused: [])
        }
        let permits = try await engine.permits(
            .remove, objectIDs: Set(ids), table: call.table, identity: call.identity, logger: logger)
        let permitted = ids.filter(permits.permitted.contains)
        if !permitted.isEmpty {
            _ = try await engine.deleteBulk(
                call.table, condition: Self.byIDs(permitted), identity: call.identity, logger: logger)
        }
        return Self.deletion(
            removed: permitted, missing: ids.filter { !permits.existing.contains($0) },
            refused: ids.filter { permits.existing.contains($0) && !permits.permitted.contains($0) })
    }

    /// `{"ids": [...]}`, as QuickBlox lists ids in its answers.
    private static func idList(_ ids: [String]) -> JSONValue {
        .object(JSONObject([("ids", .array(ids.map(JSONValue.string)))]))
    }

    private static func deletion(removed: [String], missing: [String], refused: [String]) -> Response {
        let list = idList
        return .json(
            .object(
                JSONObject([
                    ("SuccessfullyDeleted", list(removed)), ("NotFound", list(missing)),
                    ("WrongPermissions", list(refused)),
                ])))
    }

    // MARK: Several records

    /// `POST data/{class}/multi.json` (`{"record": {"1": {…}, "2": {…}}}` or `record[1][field]=…`):
    /// all records or none, answered as `{"class_name", "items"}`.
    func createMany(_ call: PublicCall) async throws -> Response {
        let records = try Self.records(call)
        guard records.allSatisfy({ $0.permissions == nil }) else {
            throw QuickBloxError.malformed("Permissions are set on one record at a time (create or update it)")
        }
        let ids = try await engine.createBulk(
            call.table, objects: records.map(\.changes), identity: call.identity, logger: call.context.logger)
        let items = try await objects(ids, call)
        return .json(
            .object(
                JSONObject([
                    ("class_name", .string(call.table)),
                    ("items", .array(items)),
                ])))
    }

    /// `PUT data/{class}/multi.json`: each record names its `_id` (or `id`); the records the
    /// caller may update change together in one transaction, and the ids of the others (missing,
    /// or not the caller's to update) come back in `not_found`.
    func updateMany(_ call: PublicCall) async throws -> Response {
        let records = try Self.records(call)
        let ids = try records.map { record in
            guard let id = record.id, record.permissions == nil, !record.changes.members.isEmpty else {
                throw QuickBloxError.malformed("Each record names its _id and the fields it changes (no permissions)")
            }
            return id
        }
        guard Set(ids).count == ids.count else { throw QuickBloxError.malformed("A record id is named twice") }
        let logger = call.context.logger
        let permits = try await engine.permits(
            .update, objectIDs: Set(ids), table: call.table, identity: call.identity, logger: logger)
        let updating = records.filter { permits.permitted.contains($0.id ?? "") }
        var rows: [String] = []
        if !updating.isEmpty {
            try await engine.prepareSchema(
                call.table, for: updating.map(\.changes), createTable: false, operation: .update,
                identity: call.identity, logger: logger)
            rows = try await engine.transaction(identity: call.identity, logger: logger) { transaction in
                var rows: [String] = []
                for record in updating {
                    rows.append(try await transaction.update(call.table, id: record.id ?? "", changes: record.changes))
                }
                return rows
            }
        }
        let missing = ids.filter { !permits.permitted.contains($0) }
        return .json(
            .object(
                JSONObject([
                    ("class_name", .string(call.table)),
                    ("not_found", Self.idList(missing)),
                    ("items", .array(try rows.map { try QuickBloxRecord.record($0, whole: true) })),
                ])))
    }

    // MARK: Bodies

    /// One record from a JSON or form body.
    private static func write(_ call: PublicCall) throws -> QuickBloxWrite {
        if call.hasFormBody { return try QuickBloxWrite(form: try formItems(call)) }
        return try QuickBloxWrite(json: try call.object)
    }

    /// The `record` map of a multi body, in the order of its keys (`1`, `2`, …): 1 to
    /// ``maximumRecords`` records.
    private static func records(_ call: PublicCall) throws -> [QuickBloxWrite] {
        var byKey: [(key: String, entries: [QuickBloxWrite.Entry])] = []
        var positions: [String: Int] = [:]
        func add(_ key: String, _ entry: QuickBloxWrite.Entry) throws {
            if let index = positions[key] {
                byKey[index].entries.append(entry)
                return
            }
            guard byKey.count < maximumRecords else { throw DataError.bulkLimit(maximumRecords) }
            positions[key] = byKey.count
            byKey.append((key, [entry]))
        }
        if call.hasFormBody {
            for (name, value) in try formItems(call) {
                let path = try QuickBloxWrite.keyPath(name)
                guard path.count >= 3, path[0] == "record" else { throw recordsExpected }
                try add(
                    path[1],
                    QuickBloxWrite.Entry(
                        path: Array(path.dropFirst(2)), value: value == "null" ? .null : .string(value)))
            }
        } else {
            guard let map = try call.object["record"]?.object else { throw recordsExpected }
            for (key, value) in map.members {
                guard let object = value.object else { throw recordsExpected }
                for entry in try QuickBloxWrite.entries(json: object) { try add(key, entry) }
            }
        }
        guard !byKey.isEmpty else { throw recordsExpected }
        let ordered = byKey.sorted { (Int($0.key) ?? Int.max, $0.key) < (Int($1.key) ?? Int.max, $1.key) }
        return try ordered.map { try QuickBloxWrite(entries: $0.entries) }
    }

    private static var recordsExpected: ErrorEnvelope {
        QuickBloxError.malformed("The body holds records: {\"record\": {\"1\": {…}, \"2\": {…}}} or record[1][field]=…")
    }

    private static func formItems(_ call: PublicCall) throws -> [(name: String, value: String)] {
        do {
            return try call.formItems
        } catch let error as ErrorEnvelope {
            throw QuickBloxError.malformed(error.message)
        }
    }

    /// `objectId IN (ids)`.
    static func byIDs(_ ids: [String]) -> Condition {
        .membership(.property(PropertyPath(["objectId"])), ids.map(ValueExpression.string), negated: false)
    }
}
