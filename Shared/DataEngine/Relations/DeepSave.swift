import InternalProtocol
import Logging
import Permissions
import QueryLanguage

/// `PUT /data/{table}/deep-save`: an object tree saved in one transaction. Objects with an
/// `objectId` are updated with the properties they carry (one carrying nothing else is only
/// linked), the rest created; a nested object or array under a relation column sets that
/// relation (`null` clears a 1:1, `[]` a 1:N, a list replaces the 1:N's children); `__subID` marks
/// an object that a later `{"__originSubID": …}` stands for. Tables and columns must exist. The
/// answer is the tree as saved, every level with its system fields (a cleared relation absent, a
/// 1:N's created children listed before its existing ones).
package struct DeepSave {
    let engine: DataEngine
    let context: WriteContext

    /// The deepest tree and the most objects one deep save takes.
    package static let maximumDepth = 10
    package static let maximumObjects = 1_000

    /// What the first pass learned: objects in document order and the `__subID`s they declare.
    private struct Shape {
        var objects = 0
        var declared: Set<String> = []
    }

    /// Refuses, before any statement, a tree deeper than ``maximumDepth`` (1018), larger than
    /// ``maximumObjects`` (1021), or whose references are unknown or cyclic (1022).
    static func check(_ object: JSONObject) throws {
        var shape = Shape()
        try check(object, depth: 0, open: [], shape: &shape)
    }

    private static func check(_ object: JSONObject, depth: Int, open: Set<String>, shape: inout Shape) throws {
        if let reference = object["__originSubID"]?.string {
            guard shape.declared.contains(reference) else {
                throw DataError.invalidBody("__originSubID '\(reference)' names no earlier __subID")
            }
            guard !open.contains(reference) else {
                throw DataError.invalidBody(
                    "__originSubID '\(reference)' points back at an object that contains it (a cycle)")
            }
            return
        }
        guard depth <= maximumDepth else {
            throw DataError.queryTooComplex("Deep save goes deeper than \(maximumDepth) levels")
        }
        shape.objects += 1
        guard shape.objects <= maximumObjects else { throw DataError.bulkLimit(maximumObjects) }
        var open = open
        if let id = object["__subID"]?.string {
            guard shape.declared.insert(id).inserted else {
                throw DataError.invalidBody("__subID '\(id)' is declared twice")
            }
            open.insert(id)
        }
        for (_, value) in object.members {
            for child in nestedObjects(value) { try check(child, depth: depth + 1, open: open, shape: &shape) }
        }
    }

    /// The objects a property's value nests: an object, or the objects of an array.
    private static func nestedObjects(_ value: JSONValue) -> [JSONObject] {
        switch value {
        case .object(let object)
        where object["___class"]?.string != "BackendlessExpression" && object["___operation"] == nil:
            [object]
        case .array(let items): items.compactMap(\.object)
        default: []
        }
    }

    /// Saves `object` (and what it nests) in `table`; answers the saved tree.
    func save(_ object: JSONObject, table: String) async throws -> JSONObject {
        var saved: [String: JSONObject] = [:]
        return try await save(object, table: table, saved: &saved)
    }

    private func save(_ object: JSONObject, table tableName: String, saved: inout [String: JSONObject]) async throws
        -> JSONObject
    {
        if let reference = object["__originSubID"]?.string {
            // The check saw the mark, but inside a plain JSON value, which saves no object.
            guard let earlier = saved[reference] else {
                throw DataError.invalidBody("__originSubID '\(reference)' names no object saved earlier in the tree")
            }
            return earlier
        }
        let (catalog, table) = try await engine.table(tableName, app: context.identity.appId)
        var plain = JSONObject()
        var related: [(RelationSchema, JSONValue)] = []
        for member in object.members where member.key != "__subID" {
            if let relation = table.relation(named: member.key) {
                related.append((relation, member.value))
            } else {
                plain.members.append(member)
            }
        }
        var result = try await savePlain(plain, table: table)
        guard let id = result["objectId"]?.string else { throw ErrorEnvelope.internalError }
        for (relation, value) in related {
            guard let child = catalog.table(named: relation.relatedTable) else {
                throw DataError.tableNotFound(relation.relatedTable)
            }
            var (children, created) = ([JSONObject](), [Bool]())
            for item in try Self.children(value, relation: relation) {
                children.append(try await save(item, table: child.name, saved: &saved))
                created.append(item["objectId"] == nil)
            }
            let resolved = ResolvedRelation(catalog: catalog, parent: table, relation: relation, child: child)
            let ids = children.compactMap { $0["objectId"]?.string }
            _ = try await engine.changeRelation(
                .set, resolved, parentID: id, children: .ids(ids), identity: context.identity, session: context.session)
            // A relation cleared (`null`, `[]`) is absent from the answer; a 1:N lists the
            // children it created before those that existed (the JS SDK's data-deep-save.js).
            guard !children.isEmpty else { continue }
            let answered = zip(children, created).filter { $0.1 } + zip(children, created).filter { !$0.1 }
            result[relation.name] =
                relation.isMany ? .array(answered.map { .object($0.0) }) : .object(children[0])
        }
        if let subID = object["__subID"]?.string { saved[subID] = result }
        return result
    }

    /// The objects a relation's value names: `null` none, an object one, an array its objects (an
    /// id string stands for an existing object).
    private static func children(_ value: JSONValue, relation: RelationSchema) throws -> [JSONObject] {
        let items: [JSONValue]
        switch value {
        case .null: return []
        case .array(let array): items = array
        default: items = [value]
        }
        return try items.map { item in
            switch item {
            case .object(let object): return object
            case .string(let id) where !id.isEmpty: return JSONObject([("objectId", .string(id))])
            default: throw DataError.invalidBody("Relation '\(relation.name)' takes objects, an array of them or null")
            }
        }
    }

    /// Creates or updates the object's own columns; an object carrying only its id is read.
    private func savePlain(_ object: JSONObject, table: TableSchema) async throws -> JSONObject {
        let text: String
        if let id = object["objectId"]?.string {
            let changes = object.members.filter { !ObjectReader.isIgnored($0.key) }
            if changes.isEmpty {
                var query = FindQuery()
                query.condition = .comparison(.property(PropertyPath(["objectId"])), .equal, .string(id))
                guard
                    let found = try await engine.find(
                        table.name, query: query, identity: context.identity, session: context.session
                    )
                    .first
                else {
                    throw try await engine.missing(
                        id, table: table.name, appID: context.identity.appId, operation: .find, session: context.session
                    )
                }
                text = found
            } else {
                text = try await engine.update(table.name, id: id, changes: object, context: context)
            }
        } else {
            text = try await engine.create(table.name, object: object, context: context)
        }
        guard let saved = try JSONParser.parse(text).object else { throw ErrorEnvelope.internalError }
        return saved
    }
}

extension DataEngine {
    /// Saves an object tree in one transaction (see ``DeepSave``) and answers it as saved.
    package func deepSave(_ tableName: String, object: JSONObject, identity: Identity, logger: Logger) async throws
        -> JSONValue
    {
        try DeepSave.check(object)
        return try await mappingErrors(table: tableName, logger: logger) {
            try await session(logger).transaction { session in
                let context = WriteContext(session: session, identity: identity, schemaChanges: false)
                return .object(try await DeepSave(engine: self, context: context).save(object, table: tableName))
            }
        }
    }
}
