import Foundation

/// A JSON value that keeps what the data engine needs and `JSONDecoder` loses: whether a
/// number was written as an integer (`3`) or a fraction (`3.0`), and the order of object keys
/// (new columns are added in the order the client wrote them).
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
    /// Already-encoded JSON text, spliced into output as is (rows rendered by PostgreSQL).
    case raw(String)

    /// The object's members, or nil.
    package var object: JSONObject? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// The string, or nil.
    package var string: String? {
        if case .string(let string) = self { return string }
        return nil
    }

    /// The array, or nil.
    package var array: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// An integer, also from an integral fraction or a numeric string.
    package var integerValue: Int64? {
        switch self {
        case .integer(let value): value
        case .number(let value): Int64(exactly: value)
        case .string(let text): Int64(text.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    /// A boolean, also from `"true"`/`"false"`.
    package var boolValue: Bool? {
        switch self {
        case .bool(let value): value
        case .string("true"): true
        case .string("false"): false
        default: nil
        }
    }
}

/// A JSON object's members in their original order.
package struct JSONObject: Sendable, Hashable {
    /// The members in order; keys are unique (the parser refuses duplicates).
    package var members: [(key: String, value: JSONValue)]

    /// Creates an object.
    package init(_ members: [(key: String, value: JSONValue)] = []) {
        self.members = members
    }

    /// The value for `key`, or nil.
    package subscript(key: String) -> JSONValue? {
        get { members.first { $0.key == key }?.value }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append((key, newValue))
            }
        }
    }

    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    package func hash(into hasher: inout Hasher) {
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}
