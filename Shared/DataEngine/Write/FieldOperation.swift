import InternalProtocol

/// An in-place change to one column, applied atomically by the UPDATE itself:
/// `{"___operation": NAME, "args": …}`. The JSON operations are Backendless's (MySQL
/// semantics); the array operations and `INCREMENT` cover QuickBlox's `push pull pull_all pop
/// add_to_set inc` (README: "Update operators").
enum FieldOperation: Sendable {
    /// JSON_SET, JSON_INSERT, JSON_REPLACE, JSON_REMOVE, JSON_ARRAY_APPEND, JSON_ARRAY_INSERT:
    /// steps applied left to right.
    case json([JSONStep])
    /// Appends the values.
    case push([JSONValue])
    /// Removes every element for which `element <operator> value` holds.
    case pull(PullOperator, JSONValue)
    /// Removes every element equal to one of the values.
    case pullAll([JSONValue])
    /// Removes the first (`first`) or last element.
    case pop(first: Bool)
    /// Appends each value the array does not hold yet.
    case addToSet([JSONValue])
    /// Adds a number (negative: subtracts); a null column counts as 0.
    case increment(JSONValue)

    /// At most this many paths or values per operation.
    static let argumentLimit = 100

    /// One step of a JSON operation.
    enum JSONStep: Sendable {
        case write(JSONPath, JSONValue, WriteMode)
        case remove(JSONPath)
        case arrayAppend(JSONPath, JSONValue)
        case arrayInsert(JSONPath, JSONValue)
    }

    /// JSON_SET writes always, JSON_INSERT only where nothing is, JSON_REPLACE only where something is.
    enum WriteMode: String, Sendable {
        case set, insert, replace
    }

    /// How ARRAY_PULL matches elements (QuickBlox's `pull[field][op]`).
    enum PullOperator: String, Sendable {
        case eq, ne, lt, lte, gt, gte, `in`, nin
    }

    /// Whether the operation can change a column of `type`: JSON columns for all but
    /// INCREMENT, which needs a number column (an integer one, an integral amount).
    func fits(_ type: ColumnType) -> Bool {
        switch (self, type) {
        case (.increment(.integer), .int), (.increment(.integer), .autoIncrement), (.increment, .double): true
        case (.increment, _): false
        case (_, .json): true
        default: false
        }
    }

    /// The column type dynamic schema gives a new column this operation names.
    var inferredColumnType: ColumnType {
        switch self {
        case .increment(.integer): .int
        case .increment: .double
        default: .json
        }
    }
}

extension FieldOperation {
    /// Reads `{"___operation": …, "args": …}` for `property`.
    init(_ object: JSONObject, property: String) throws {
        guard let name = object["___operation"]?.string else {
            throw Self.invalid(property, "needs an ___operation name")
        }
        let args = object["args"] ?? .null
        switch name {
        case "JSON_SET", "JSON_INSERT", "JSON_REPLACE":
            let mode = WriteMode(rawValue: String(name.dropFirst(5)).lowercased()) ?? .set
            self = .json(try Self.pathValues(args, property).map { .write($0, $1, mode) })
        case "JSON_ARRAY_APPEND":
            self = .json(try Self.pathValues(args, property).map { .arrayAppend($0, $1) })
        case "JSON_ARRAY_INSERT":
            let steps = try Self.pathValues(args, property)
            guard steps.allSatisfy({ if case .index? = $0.0.steps.last { true } else { false } }) else {
                throw Self.invalid(property, "has a JSON_ARRAY_INSERT path that does not end in an [index]")
            }
            self = .json(steps.map { .arrayInsert($0, $1) })
        case "JSON_REMOVE":
            self = .json(
                try Self.values(args, property).map { path in
                    guard let text = path.string else { throw Self.invalid(property, "takes an array of paths") }
                    return .remove(try JSONPath(text))
                })
        case "ARRAY_PUSH": self = .push(try Self.values(args, property))
        case "ARRAY_PULL_ALL": self = .pullAll(try Self.values(args, property))
        case "ARRAY_ADD_TO_SET": self = .addToSet(try Self.values(args, property))
        case "ARRAY_PULL": self = try Self.pull(object, args: args, property: property)
        case "ARRAY_POP":
            guard let end = args.integerValue, end == 1 || end == -1 else {
                throw Self.invalid(property, "takes 1 (pop the last element) or -1 (the first)")
            }
            self = .pop(first: end == -1)
        case "INCREMENT":
            switch args {
            case .integer, .number: self = .increment(args)
            default: throw Self.invalid(property, "takes a number")
            }
        default:
            throw Self.invalid(property, "has an unknown ___operation '\(name)'")
        }
    }

    private static func pull(_ object: JSONObject, args: JSONValue, property: String) throws -> FieldOperation {
        let name = object["operator"]?.string ?? "eq"
        guard let pullOperator = PullOperator(rawValue: name) else {
            throw invalid(property, "has an operator other than eq, ne, lt, lte, gt, gte, in or nin")
        }
        if pullOperator == .in || pullOperator == .nin {
            return .pull(pullOperator, .array(try values(args, property)))
        }
        return .pull(pullOperator, args)
    }

    /// `{"$.path": value, …}` in order.
    private static func pathValues(_ args: JSONValue, _ property: String) throws -> [(JSONPath, JSONValue)] {
        guard let members = args.object?.members, (1...argumentLimit).contains(members.count) else {
            throw invalid(property, "takes args {\"$.path\": value, …} with 1 to \(argumentLimit) paths")
        }
        return try members.map { (try JSONPath($0.key), $0.value) }
    }

    /// `[value, …]`.
    private static func values(_ args: JSONValue, _ property: String) throws -> [JSONValue] {
        guard let items = args.array, (1...argumentLimit).contains(items.count) else {
            throw invalid(property, "takes args as an array of 1 to \(argumentLimit) values")
        }
        return items
    }

    private static func invalid(_ property: String, _ problem: String) -> ErrorEnvelope {
        DataError.invalidBody("The update operation for '\(property)' \(problem)")
    }
}
