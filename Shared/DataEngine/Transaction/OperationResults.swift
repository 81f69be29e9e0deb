import InternalProtocol

/// The results of a unit of work's operations so far, and the resolution of `___ref`
/// references to them (`{"___ref": true, "opResultId": …, "propName"?: …, "resultIndex"?: …}`).
struct OperationResults: Sendable {
    private var results: [String: (type: UnitOfWork.OperationType, value: JSONValue)] = [:]
    private var order: [String] = []

    /// Records an operation's result.
    mutating func record(_ operation: UnitOfWork.Operation, _ value: JSONValue) {
        results[operation.opResultId] = (operation.type, value)
        order.append(operation.opResultId)
    }

    /// The success envelope's `results` member.
    var envelope: JSONValue {
        .object(
            JSONObject(
                order.compactMap { id in
                    guard let (type, value) = results[id] else { return nil }
                    return (id, .object(JSONObject([("operationType", .string(type.rawValue)), ("result", value)])))
                }))
    }

    /// `payload` with every reference replaced by the value it names.
    func resolving(_ payload: JSONValue) throws -> JSONValue {
        switch payload {
        case .array(let items):
            return .array(try items.map(resolving))
        case .object(let object):
            if Self.isReference(object) { return try value(of: object) }
            return .object(JSONObject(try object.members.map { ($0.key, try resolving($0.value)) }))
        default:
            return payload
        }
    }

    /// Whether `object` is a `___ref` marker.
    static func isReference(_ object: JSONObject) -> Bool {
        object["___ref"]?.boolValue == true
    }

    private func value(of reference: JSONObject) throws -> JSONValue {
        guard let id = reference["opResultId"]?.string, let result = results[id] else {
            let name = reference["opResultId"]?.string ?? "?"
            throw DataError.invalidBody("A reference names '\(name)', which is not an earlier operation")
        }
        var value = try Self.parsed(result.value)
        if let index = reference["resultIndex"], index != .null {
            guard let position = index.integerValue, let items = value.array, items.indices.contains(Int(position))
            else {
                throw DataError.invalidBody("A reference to '\(id)' has a resultIndex outside its result")
            }
            value = items[Int(position)]
        }
        if let property = reference["propName"]?.string {
            value = try Self.property(property, of: value, result: id)
        }
        return Self.unlinked(value)
    }

    /// `value` with each URL of a file under this request's links (``FileLinks``) back to the
    /// file's path: what a reference copies is stored, and read by others than the requester,
    /// whose API key such a URL holds.
    private static func unlinked(_ value: JSONValue) -> JSONValue {
        guard let base = FileLinks.base else { return value }
        switch value {
        case .string(let text) where text.hasPrefix(base):
            return .string(FilePath(fileReference: text)?.description ?? String(text.dropFirst(base.count)))
        case .array(let items):
            return .array(items.map(unlinked))
        case .object(let object):
            return .object(JSONObject(object.members.map { ($0.key, unlinked($0.value)) }))
        default:
            return value
        }
    }

    /// `property` of an object result; an id string (a bulk create's result) stands for its object's `objectId`.
    private static func property(_ property: String, of value: JSONValue, result id: String) throws -> JSONValue {
        if case .string = value, property == "objectId" { return value }
        guard let member = value.object?[property] else {
            throw DataError.invalidBody("A reference to '\(id)' names '\(property)', which its result lacks")
        }
        return member
    }

    /// Rows come back from PostgreSQL as JSON text; references need them parsed.
    private static func parsed(_ value: JSONValue) throws -> JSONValue {
        if case .array(let items) = value { return .array(try items.map(parsed)) }
        guard case .raw(let text) = value else { return value }
        do {
            return try JSONParser.parse(text)
        } catch {
            throw DataError.invalidBody(error.message)
        }
    }
}
