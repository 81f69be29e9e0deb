@testable import DataEngine

/// Request bodies: the bytes are parsed as JSON; a document that parses must write back to text
/// that parses to the same value, and every value in it is encoded for every column type, each
/// encoding bound as a statement parameter the way a save binds it.
enum JSONTarget {
    /// Parses one input as a request body and encodes what parses.
    static func run(_ input: [UInt8]) {
        guard let document = try? JSONParser.parse(input) else { return }
        checkRoundTrip(document)
        var sql = SQL()
        forEachValue(in: document) { value in
            for type in ColumnType.allCases {
                guard let encoded = ValueEncoding.encode(value, as: type) else { continue }
                if case .timestamp(let date) = encoded, TimestampRange.storable(date) == nil {
                    preconditionFailure(
                        "\(value.jsonText) encodes as \(type.rawValue) to \(date), which PostgreSQL cannot store")
                }
                sql.bind(encoded)
            }
        }
    }

    /// ``JSONValue/jsonText`` must parse back to the value it was written from.
    private static func checkRoundTrip(_ document: JSONValue) {
        let written = document.jsonText
        guard let reparsed = try? JSONParser.parse(written) else {
            preconditionFailure("'\(written)', written from a parsed document, does not parse")
        }
        guard reparsed == document else {
            preconditionFailure("'\(written)' parses to \(reparsed), not to \(document)")
        }
    }

    /// Calls `body` on `value` and on everything nested in it.
    private static func forEachValue(in value: JSONValue, _ body: (JSONValue) -> Void) {
        body(value)
        switch value {
        case .array(let items): for item in items { forEachValue(in: item, body) }
        case .object(let object): for member in object.members { forEachValue(in: member.value, body) }
        default: break
        }
    }
}
