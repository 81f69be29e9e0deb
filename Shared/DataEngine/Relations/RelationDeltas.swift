import InternalProtocol
import Logging

/// One relation column's changes inside a save: children to link and children to unlink.
struct RelationDelta: Sendable {
    /// The relation column.
    let relation: RelationSchema
    /// The children to link.
    let added: [String]
    /// The children to unlink.
    let removed: [String]
}

/// Relationship changes a plain save carries — Backbeam's `addObject:forField:` and
/// `removeObject:forField:` before `save`: under a relation column,
/// `{"___add": [ids or objects], "___remove": [ids or objects]}` links and unlinks those children
/// of the saved object in the save's own transaction, under the relation API's rights
/// (AddRelation and DeleteRelation on the saved object, Find on each child). Without these keys
/// a plain save leaves relations alone, as before.
enum RelationDeltas {
    /// The member listing the children to link.
    static let addKey = "___add"
    /// The member listing the children to unlink.
    static let removeKey = "___remove"

    /// Whether `value` asks for relation changes: an object with ``addKey`` or ``removeKey``.
    static func isDelta(_ value: JSONValue) -> Bool {
        guard let object = value.object else { return false }
        return object[addKey] != nil || object[removeKey] != nil
    }

    /// Whether any property of `object` asks for relation changes.
    static func carried(by object: JSONObject) -> Bool {
        object.members.contains { isDelta($0.value) }
    }

    /// `object` without its relation changes, and the changes read against `table`. Each must
    /// name a relation column (1011 for an unknown one, 1027 for a plain column) once, carry
    /// only ``addKey`` and ``removeKey``, each an array of ids or of objects with an `objectId`
    /// (1022; 1021 beyond ``RelationChildren/idLimit``), and not both add and remove one child
    /// (1022).
    static func split(_ object: JSONObject, table: TableSchema) throws -> (plain: JSONObject, deltas: [RelationDelta]) {
        var plain = JSONObject()
        var deltas: [RelationDelta] = []
        for member in object.members {
            guard isDelta(member.value), let changes = member.value.object else {
                plain.members.append(member)
                continue
            }
            let change = try delta(member.key, changes, table: table)
            guard !deltas.contains(where: { $0.relation.name == change.relation.name }) else {
                throw DataError.invalidBody("Relation '\(change.relation.name)' is changed more than once")
            }
            deltas.append(change)
        }
        return (plain, deltas)
    }

    private static func delta(_ key: String, _ changes: JSONObject, table: TableSchema) throws -> RelationDelta {
        guard let relation = table.relation(named: key) else {
            if table.column(named: key) != nil { throw DataError.notARelation(key, table: table.name) }
            throw DataError.columnNotFound(key, table: table.name)
        }
        if let other = changes.members.first(where: { $0.key != addKey && $0.key != removeKey }) {
            throw DataError.invalidBody(
                "Relation '\(relation.name)' takes \(addKey) and \(removeKey) in a save, not '\(other.key.prefix(64))'")
        }
        let added = try ids(changes[addKey], key: addKey, relation: relation)
        let removed = try ids(changes[removeKey], key: removeKey, relation: relation)
        let removing = Set(removed)
        if let both = added.first(where: { removing.contains($0) }) {
            throw DataError.invalidBody("Relation '\(relation.name)' both adds and removes '\(both.prefix(64))'")
        }
        return RelationDelta(relation: relation, added: added, removed: removed)
    }

    /// The child ids one list names (absent or null: none), read as the relation API reads its body.
    private static func ids(_ value: JSONValue?, key: String, relation: RelationSchema) throws -> [String] {
        guard let value, value != .null else { return [] }
        guard value.array != nil else {
            throw DataError.invalidBody(
                "\(key) of relation '\(relation.name)' takes an array of objectIds or of objects with one")
        }
        guard case .ids(let ids) = try RelationChildren(body: value) else { return [] }
        return ids
    }
}

extension DataEngine {
    /// Creates (`id` nil) or updates object `id` with `object`'s own properties and applies the
    /// relation changes it carries (``RelationDeltas``), all in one transaction: any refusal
    /// rolls the whole save back. Answers the object as saved. The table and columns must exist
    /// already, since a transaction changes no schema.
    func saveChangingRelations(
        _ tableName: String, object: JSONObject, id: String?, identity: Identity, logger: Logger
    ) async throws -> String {
        let (catalog, table) = try await table(tableName, app: identity.appId)
        let (plain, deltas) = try RelationDeltas.split(object, table: table)
        return try await mappingErrors(table: table.name, logger: logger) {
            try await session(logger).transaction { session in
                let context = WriteContext(session: session, identity: identity, schemaChanges: false)
                let saved: String
                if let id {
                    saved = try await update(tableName, id: id, changes: plain, context: context)
                } else {
                    saved = try await create(tableName, object: plain, context: context)
                }
                let parentID = try id ?? Self.objectId(of: saved)
                for delta in deltas {
                    try await applyDelta(
                        delta, catalog: catalog, parent: table, parentID: parentID, identity: identity,
                        session: session)
                }
                return saved
            }
        }
    }

    /// Unlinks, then links, one relation's children of `parentID` inside the save's transaction.
    private func applyDelta(
        _ delta: RelationDelta, catalog: AppCatalog, parent: TableSchema, parentID: String, identity: Identity,
        session: DatabaseSession
    ) async throws {
        guard let child = catalog.table(named: delta.relation.relatedTable) else {
            throw DataError.tableNotFound(delta.relation.relatedTable)
        }
        let resolved = ResolvedRelation(catalog: catalog, parent: parent, relation: delta.relation, child: child)
        if !delta.removed.isEmpty {
            _ = try await changeRelation(
                .delete, resolved, parentID: parentID, children: .ids(delta.removed), identity: identity,
                session: session)
        }
        if !delta.added.isEmpty {
            _ = try await changeRelation(
                .add, resolved, parentID: parentID, children: .ids(delta.added), identity: identity, session: session)
        }
    }

    /// The `objectId` of an object as a write answered it.
    private static func objectId(of saved: String) throws -> String {
        guard let id = try JSONParser.parse(saved).object?["objectId"]?.string else {
            throw ErrorEnvelope.internalError
        }
        return id
    }
}
