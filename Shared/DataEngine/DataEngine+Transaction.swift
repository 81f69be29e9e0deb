import InternalProtocol
import Logging
import Permissions
import PostgresNIO
import QueryLanguage

extension DataEngine {
    /// Runs a unit of work in one transaction and answers the contract's envelope:
    /// `{"success": true, "error": null, "results": {…}}`, or, after rolling everything back,
    /// `{"success": false, "results": null, "error": {"message", "code", "operation"}}`.
    ///
    /// As in Backendless, a unit of work changes no schema: every table and column it writes
    /// must exist (the operation naming a missing one fails the unit).
    package func execute(_ work: UnitOfWork, identity: Identity, logger: Logger) async throws -> JSONValue {
        do {
            let results = try await session(logger).transaction(isolation: work.isolation) { session in
                let context = WriteContext(session: session, identity: identity, schemaChanges: false)
                var results = OperationResults()
                for operation in work.operations {
                    do {
                        let payload = try results.resolving(operation.payload)
                        results.record(operation, try await run(operation, payload: payload, context: context))
                    } catch {
                        throw OperationFailure(operation: operation, error: error)
                    }
                }
                return results
            }
            return .object(JSONObject([("success", .bool(true)), ("error", .null), ("results", results.envelope)]))
        } catch let failure as OperationFailure {
            return try Self.failureEnvelope(failure.error, operation: failure.operation.echo)
        } catch {
            // The commit itself can fail (a serialization conflict); no operation is to blame.
            return try Self.failureEnvelope(DatabaseErrors.map(error, table: "", logger: logger), operation: .null)
        }
    }

    private struct OperationFailure: Error {
        let operation: UnitOfWork.Operation
        let error: any Error
    }

    /// Client errors become the failure envelope; anything else stays an internal error.
    private static func failureEnvelope(_ error: any Error, operation: JSONValue) throws -> JSONValue {
        guard let envelope = error as? ErrorEnvelope else { throw error }
        let details = JSONObject([
            ("message", .string(envelope.message)), ("code", .integer(Int64(envelope.code))), ("operation", operation),
        ])
        return .object(JSONObject([("success", .bool(false)), ("results", .null), ("error", .object(details))]))
    }

    /// Runs one operation with its references resolved; returns its result.
    private func run(_ operation: UnitOfWork.Operation, payload: JSONValue, context: WriteContext) async throws
        -> JSONValue
    {
        let table = operation.table
        switch operation.type {
        case .create:
            return .raw(try await create(table, object: try Self.payloadObject(payload), context: context))
        case .upsert:
            return .raw(try await upsert(table, object: try Self.payloadObject(payload), context: context))
        case .update:
            let object = try Self.payloadObject(payload)
            guard let id = object["objectId"]?.string else { throw DataError.invalidBody("UPDATE needs an objectId") }
            return .raw(try await update(table, id: id, changes: object, context: context))
        case .createBulk, .upsertBulk:
            guard let items = payload.array else {
                throw DataError.invalidBody("The payload must be an array of objects")
            }
            guard items.count <= 100 else { throw DataError.transactionBulkLimit }
            let objects = try items.map(Self.payloadObject)
            let ids = try await insertBulk(
                table, objects: objects, upsert: operation.type == .upsertBulk, context: context)
            return .array(ids.map(JSONValue.string))
        case .delete:
            return .integer(try await delete(table, id: try Self.objectId(payload), context: context))
        case .updateBulk:
            let changes = try Self.payloadObject(payload.object?["changes"] ?? .null)
            let condition = try Self.selection(payload)
            return .integer(
                Int64(try await updateBulk(table, condition: condition, changes: changes, context: context)))
        case .deleteBulk:
            return .integer(
                Int64(try await deleteBulk(table, condition: try Self.selection(payload), context: context)))
        case .find:
            let rows = try await find(
                table, query: try Self.findQuery(payload), identity: context.identity, session: context.session)
            return .array(rows.map(JSONValue.raw))
        case .addRelation, .setRelation, .deleteRelation:
            return .integer(Int64(try await relationOperation(operation, payload: payload, context: context)))
        }
    }

    /// ADD_RELATION, SET_RELATION, DELETE_RELATION: `{"parentObject": id | object, "relationColumn",
    /// "unconditional": ids | objects | one of them}` or `{…, "conditional": where}` (references
    /// already resolved). The relation column must exist: a unit of work changes no schema.
    private func relationOperation(_ operation: UnitOfWork.Operation, payload: JSONValue, context: WriteContext)
        async throws -> Int
    {
        let object = try Self.payloadObject(payload)
        guard let column = object["relationColumn"]?.string else {
            throw DataError.invalidBody("\(operation.type.rawValue) needs a 'relationColumn'")
        }
        let parentID = try Self.objectId(object["parentObject"] ?? .null)
        let children: RelationChildren
        if let text = object["conditional"]?.string {
            children = .matching(
                try DataError.parsing { () throws(QueryLanguageError) in try QueryParser.condition(text) })
        } else if let given = object["unconditional"], given != .null {
            children = try RelationChildren(body: given.array == nil ? .array([given]) : given)
        } else {
            throw DataError.invalidBody(
                "\(operation.type.rawValue) needs 'unconditional' (children) or 'conditional' (a where clause)")
        }
        let resolved = try await relation(
            try RelationColumnArgument(column), of: operation.table, declaring: false, identity: context.identity,
            logger: context.session.logger)
        let change: RelationChange =
            switch operation.type {
            case .addRelation: .add
            case .setRelation: .set
            default: .delete
            }
        return try await changeRelation(
            change, resolved, parentID: parentID, children: children, identity: context.identity,
            session: context.session)
    }

    private static func payloadObject(_ payload: JSONValue) throws -> JSONObject {
        guard let object = payload.object else { throw DataError.invalidBody("The payload must be a JSON object") }
        return object
    }

    /// An object id given as a string or as an object carrying `objectId`.
    private static func objectId(_ value: JSONValue) throws -> String {
        guard let id = value.string ?? value.object?["objectId"]?.string, !id.isEmpty else {
            throw DataError.invalidBody("Expected an objectId or an object with one")
        }
        return id
    }

    /// The rows a bulk operation touches: `conditional` (a where clause) or `unconditional`
    /// (object ids, or objects carrying them).
    private static func selection(_ payload: JSONValue) throws -> Condition? {
        let object = try payloadObject(payload)
        if let text = object["conditional"]?.string {
            guard !text.allSatisfy(\.isWhitespace) else { return nil }
            return try DataError.parsing { () throws(QueryLanguageError) in try QueryParser.condition(text) }
        }
        guard let items = object["unconditional"]?.array else {
            throw DataError.invalidBody("A bulk payload needs 'conditional' (a where clause) or 'unconditional' (ids)")
        }
        let ids = try items.map(objectId)
        return .membership(.property(PropertyPath(["objectId"])), ids.map(ValueExpression.string), negated: false)
    }

    /// The FIND payload: `{pageSize, offset, properties, excludeProps, whereClause, havingClause,
    /// sortBy, groupBy}` with `queryOptions` `{sortBy, properties, excludeProps, groupBy, having,
    /// related | relations, relationsDepth, relationsPageSize}` — current SDKs nest some options
    /// there, older ones send them at the top level (which wins when both do).
    private static func findQuery(_ payload: JSONValue) throws -> FindQuery {
        guard case .object(let object) = payload else { return FindQuery() }
        var flat = JSONObject(object.members.filter { $0.key != "queryOptions" })
        // A set of the keys so far, not `flat[key]` (a scan), keeps merging linear in the keys.
        var present = Set(flat.members.map(\.key))
        for member in object["queryOptions"]?.object?.members ?? [] {
            if present.insert(member.key).inserted { flat.members.append(member) }
        }
        let names = [
            "properties": "props", "whereClause": "where", "havingClause": "having", "related": "loadRelations",
            "relations": "loadRelations",
        ]
        return try FindQuery(QueryParameters(body: flat, renaming: names))
    }
}
