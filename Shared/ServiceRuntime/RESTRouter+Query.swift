import Foundation
import HummingbirdCore
import InternalProtocol

extension RESTRouter.Call {
    /// The query string's name/value pairs, `+` and percent escapes decoded, in order; a
    /// malformed escape is a 400.
    public var queryItems: [(name: String, value: String)] {
        get throws {
            guard let query = uri.query, !query.isEmpty else { return [] }
            return try query.split(separator: "&").map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                return (try Self.decode(parts[0]), parts.count > 1 ? try Self.decode(parts[1]) : "")
            }
        }
    }

    private static func decode(_ text: Substring) throws -> String {
        let utf8 = Array(text.utf8)
        let escapesAreValid = utf8.indices.allSatisfy { index in
            utf8[index] != UInt8(ascii: "%")
                || (index + 2 < utf8.count && isHexDigit(utf8[index + 1]) && isHexDigit(utf8[index + 2]))
        }
        guard escapesAreValid, let decoded = text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
            throw ErrorEnvelope.badRequest("Malformed percent-encoding in the query string")
        }
        return decoded
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }
}
