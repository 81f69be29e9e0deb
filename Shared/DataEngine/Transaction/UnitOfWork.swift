/// A parsed `POST /transaction/unit-of-work` request: operations run in order in one
/// database transaction, later ones able to reference earlier results.
package struct UnitOfWork: Sendable {
    /// At most this many operations per unit of work.
    package static let operationLimit = 1000
    /// The longest `opResultId`, in bytes.
    package static let maximumResultIdLength = 256

    /// The transaction's isolation level.
    package var isolation: DatabaseSession.IsolationLevel
    /// The operations in request order.
    package var operations: [Operation]

    /// One operation of a unit of work.
    package struct Operation: Sendable {
        /// What it does.
        package var type: OperationType
        /// The table it works on.
        package var table: String
        /// The name later operations use to reference its result.
        package var opResultId: String
        /// Its payload as sent (references unresolved).
        package var payload: JSONValue

        /// The operation as the failure envelope echoes it.
        var echo: JSONValue {
            .object(
                JSONObject([
                    ("table", .string(table)), ("opResultId", .string(opResultId)),
                    ("operationType", .string(type.rawValue)), ("payload", payload),
                ]))
        }
    }

    /// The contract's operation types (relation types arrive with the relations service).
    package enum OperationType: String, Sendable, CaseIterable {
        case create = "CREATE", createBulk = "CREATE_BULK", update = "UPDATE", updateBulk = "UPDATE_BULK"
        case delete = "DELETE", deleteBulk = "DELETE_BULK", upsert = "UPSERT", upsertBulk = "UPSERT_BULK"
        case find = "FIND", addRelation = "ADD_RELATION", setRelation = "SET_RELATION"
        case deleteRelation = "DELETE_RELATION"
    }

    /// Reads a request body. The whole request is refused (1022) only when it is not a unit of
    /// work at all; a bad operation is reported in the failure envelope instead.
    package init(body: JSONValue?) throws {
        guard let object = body?.object, let items = object["operations"]?.array else {
            throw DataError.invalidBody("Expected {\"operations\": [...]} with at least one operation")
        }
        guard !items.isEmpty, items.count <= Self.operationLimit else {
            throw DataError.invalidBody("A unit of work holds 1 to \(Self.operationLimit) operations")
        }
        isolation = try Self.isolation(object["isolationLevelEnum"])
        operations = []
        var seen = Set<String>()
        var defaultNumbers: [String: Int] = [:]
        for (index, item) in items.enumerated() {
            let operation = try Self.operation(item, index: index) { prefix in
                defaultNumbers[prefix, default: 0] += 1
                return prefix + String(defaultNumbers[prefix, default: 0])
            }
            guard seen.insert(operation.opResultId).inserted else {
                throw DataError.invalidBody("Duplicate opResultId '\(operation.opResultId)'")
            }
            operations.append(operation)
        }
    }

    private static func isolation(_ value: JSONValue?) throws -> DatabaseSession.IsolationLevel {
        switch value {
        case nil, .null?: return .readCommitted
        case .string("READ_UNCOMMITTED")?: return .readUncommitted
        case .string("READ_COMMITTED")?: return .readCommitted
        case .string("REPEATABLE_READ")?: return .repeatableRead
        // The docs spell it SERIALZABLE; the SDKs send SERIALIZABLE.
        case .string("SERIALIZABLE")?, .string("SERIALZABLE")?: return .serializable
        default:
            throw DataError.invalidBody(
                "isolationLevelEnum must be READ_UNCOMMITTED, READ_COMMITTED, REPEATABLE_READ or SERIALIZABLE")
        }
    }

    /// One operation; `defaultName` numbers `<type><Table>` ids as the SDKs do (`createPerson1`).
    private static func operation(_ item: JSONValue, index: Int, defaultName: (String) -> String) throws
        -> Operation
    {
        guard let object = item.object else { throw DataError.invalidBody("Operation \(index + 1) is not an object") }
        guard let typeName = object["operationType"]?.string, let type = OperationType(rawValue: typeName) else {
            let names = OperationType.allCases.map(\.rawValue).joined(separator: ", ")
            throw DataError.invalidBody("Operation \(index + 1) needs an operationType: one of \(names)")
        }
        guard let table = object["table"]?.string, !table.isEmpty else {
            throw DataError.invalidBody("Operation \(index + 1) needs a table")
        }
        let opResultId = object["opResultId"]?.string ?? defaultName(typeName.lowercased() + table)
        // An id is a name a later operation refers to, answered back with its result: not a payload.
        guard opResultId.utf8.count <= Self.maximumResultIdLength else {
            throw DataError.invalidBody("An opResultId may be at most \(Self.maximumResultIdLength) bytes long")
        }
        return Operation(type: type, table: table, opResultId: opResultId, payload: object["payload"] ?? .null)
    }
}
