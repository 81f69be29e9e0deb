import InternalProtocol
import QueryLanguage

/// A value a save assigns to a column: a bound literal or an expression over the row.
enum WriteValue: Sendable {
    case bound(SQLValue)
    /// `{"___class":"BackendlessExpression","value":"age + 1"}`, evaluated atomically in SQL.
    case expression(ValueExpression)
    /// `{"___operation": …, "args": …}`, applied to the column's current value in SQL.
    case operation(FieldOperation)
}

/// One object of a save, checked against the table: its id and its column assignments.
struct PreparedObject: Sendable {
    /// The `objectId` the client sent, if any.
    var objectId: String?
    /// Column assignments in the order the client wrote them.
    var assignments: [(column: ColumnSchema, value: WriteValue)]
}

/// Reads client objects: which keys are properties, what their values mean, and which
/// columns dynamic schema must add first.
enum ObjectReader {
    /// Keys the server owns or SDKs add (lower-cased); never stored as properties, in any spelling.
    static let ignoredKeys: Set<String> = [
        "___class", "__meta", "created", "updated", "ownerid", "__subid", "__originsubid", "objectid",
    ]

    /// Whether `key`, in any spelling, is one the server owns.
    static func isIgnored(_ key: String) -> Bool {
        ignoredKeys.contains(key.lowercased())
    }

    /// Properties of a table (lower-cased names) that saves may not carry: another service owns
    /// them. `Users.password` lives only as a hash in users-service.
    static let reservedProperties: [String: Set<String>] = ["users": ["password"]]

    /// Refuses objects that carry a reserved property in any spelling (1022).
    static func refuseReserved(_ objects: [JSONObject], table: String) throws {
        guard let reserved = reservedProperties[table.lowercased()] else { return }
        for object in objects {
            if let key = object.members.first(where: { reserved.contains($0.key.lowercased()) })?.key {
                throw DataError.invalidBody("'\(key)' is set through the users API, never stored as data")
            }
        }
    }

    /// What a property's raw value asks for.
    enum Intent {
        case value(JSONValue)
        case expression(ValueExpression)
        case operation(FieldOperation)
    }

    static func intent(of value: JSONValue, property: String) throws -> Intent {
        if let object = value.object, object["___operation"] != nil {
            return .operation(try FieldOperation(object, property: property))
        }
        guard let object = value.object, let className = object["___class"]?.string else { return .value(value) }
        guard className == "BackendlessExpression" else {
            throw DataError.notSupportedYet(
                "Saving related objects inline (property '\(property)'); use the relations API")
        }
        guard let text = object["value"]?.string else {
            throw DataError.invalidBody("BackendlessExpression for '\(property)' needs a string 'value'")
        }
        return .expression(try DataError.parsing { () throws(QueryLanguageError) in try QueryParser.value(text) })
    }

    /// The columns `objects` need that `table` (nil: a new table) lacks, typed from the first
    /// non-null value of each.
    static func missingColumns(_ objects: [JSONObject], table: TableSchema?) throws -> [ColumnSchema] {
        var missing: [ColumnSchema] = []
        var seen = Set<String>()
        for object in objects {
            for (key, value) in object.members where !isIgnored(key) {
                guard Identifier.isValid(key) else { throw DataError.invalidName(key) }
                guard table?.hasProperty(named: key) != true, !seen.contains(key.lowercased()) else { continue }
                let type: ColumnType
                switch try intent(of: value, property: key) {
                case .expression: throw DataError.columnNotFound(key, table: table?.name ?? "")
                case .operation(let operation): type = operation.inferredColumnType
                case .value(let raw):
                    guard let inferred = ColumnType.inferred(from: raw) else { continue }
                    type = inferred
                }
                // `_parent_id` names the parent object: only text makes the column (and rows answer it
                // as a string or null, as QuickBlox's records do).
                guard key != ParentReference.column || type == .string else { throw DataError.invalidDataType([key]) }
                seen.insert(key.lowercased())
                // Deletes look children up by `_parent_id`, so it gets an index of its own.
                missing.append(ColumnSchema(name: key, type: type, indexed: key == ParentReference.column))
            }
        }
        return missing
    }

    /// Checks `object` against `table` and encodes its values; type errors name every
    /// offending property at once.
    static func prepare(_ object: JSONObject, table: TableSchema, allowExpressions: Bool) throws
        -> PreparedObject
    {
        var prepared = PreparedObject(objectId: nil, assignments: [])
        var wrongType: [String] = []
        if let id = object["objectId"] {
            guard case .string(let text) = id, !text.isEmpty, text.count <= 100 else {
                throw DataError.invalidBody("objectId must be a non-empty string of at most 100 characters")
            }
            prepared.objectId = text
        }
        var named = Set<String>()
        for (key, value) in object.members where !isIgnored(key) {
            guard let column = table.column(named: key) else {
                // A plain save leaves relations alone (SDKs send loaded children back on update);
                // links change through the relation API and deep save.
                if case .null = value { continue }
                if table.relation(named: key) != nil { continue }
                throw DataError.columnNotFound(key, table: table.name)
            }
            // Keys differing only in case name one column; writing it twice is ambiguous.
            guard named.insert(column.name).inserted else {
                throw DataError.invalidBody("Property '\(column.name)' is given more than once (as '\(key)')")
            }
            switch try intent(of: value, property: key) {
            case .expression(let expression):
                guard allowExpressions else {
                    throw DataError.invalidBody("BackendlessExpression is only allowed when updating ('\(key)')")
                }
                prepared.assignments.append((column, .expression(expression)))
            case .operation(let operation):
                guard allowExpressions else {
                    throw DataError.invalidBody("Update operations are only allowed when updating ('\(key)')")
                }
                guard operation.fits(column.type) else {
                    wrongType.append(key)
                    continue
                }
                prepared.assignments.append((column, .operation(operation)))
            case .value(let raw):
                guard let encoded = ValueEncoding.encode(raw, as: column.type) else {
                    wrongType.append(key)
                    continue
                }
                prepared.assignments.append((column, .bound(encoded)))
            }
        }
        if !wrongType.isEmpty { throw DataError.invalidDataType(wrongType) }
        return prepared
    }

    /// Adds default values of columns the object leaves out and checks required columns
    /// (for creates).
    static func applyDefaults(_ prepared: inout PreparedObject, table: TableSchema) throws {
        let given = Set(prepared.assignments.map { $0.column.name })
        for column in table.columns where !column.isSystem && !given.contains(column.name) {
            if let defaultValue = column.defaultValue, let encoded = ValueEncoding.encode(defaultValue, as: column.type)
            {
                prepared.assignments.append((column, .bound(encoded)))
            } else if column.required && column.type != .autoIncrement {
                throw DataError.requiredMissing(column.name)
            }
        }
        for (column, value) in prepared.assignments where column.required {
            if case .bound(.null) = value { throw DataError.requiredMissing(column.name) }
        }
    }
}
