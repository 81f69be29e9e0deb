import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

extension DataRoutes {
    /// `properties` (the contract's describe) and schema management with the server-code key.
    func addSchema(to router: inout PublicRoutes) {
        router.add(.get, "data/:table/properties", doc: .describeTable) { call in
            .json(try await engine.properties(call.table, identity: call.identity))
        }
        router.add(.post, "data/:table/properties", doc: .addColumns) { call in
            try await addColumns(call)
        }
        router.add(.post, "data/:table/schema", doc: .addColumns) { call in
            try await addColumns(call)
        }
        router.add(.put, "data/:table/properties/:column", doc: .alterColumn) { call in
            .json(
                try await engine.alterColumn(
                    call.table, column: call.parameters["column"] ?? "", changes: try call.object,
                    identity: call.identity, logger: call.context.logger))
        }
        router.add(.delete, "data/:table/properties/:column", doc: .dropColumn) { call in
            try await engine.dropColumn(
                call.table, column: call.parameters["column"] ?? "", identity: call.identity,
                logger: call.context.logger)
            return .json(.object(JSONObject()))
        }
        router.add(.delete, "data/:table/schema", doc: .dropTable) { call in
            try await engine.dropTable(call.table, identity: call.identity, logger: call.context.logger)
            return .json(.object(JSONObject()))
        }
    }

    /// Column definitions (relation columns among them) from an object, an array of them, or
    /// nothing (a bare table).
    private func addColumns(_ call: PublicCall) async throws -> Response {
        let body = try call.json
        let definitions: [JSONObject] =
            switch body {
            case nil: []
            case .object(let object)?: [object]
            case .array?: try PublicCall.objects(in: body)
            default: throw DataError.invalidBody("Expected a column definition or an array of them")
            }
        let relations = try definitions.filter(DataEngine.isRelationDefinition).map { definition throws in
            try DataEngine.relationDefinition(definition)
        }
        let columns = try definitions.filter { !DataEngine.isRelationDefinition($0) }.map { definition throws in
            try DataEngine.columnDefinition(definition)
        }
        return .json(
            try await engine.addColumns(
                call.table, columns: columns, relations: relations, identity: call.identity, logger: call.context.logger
            ))
    }
}
