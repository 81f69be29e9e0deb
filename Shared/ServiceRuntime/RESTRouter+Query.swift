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
        guard let decoded = PercentEncoding.decode(text, plusAsSpace: true) else {
            throw ErrorEnvelope.badRequest("Malformed percent-encoding in the query string")
        }
        return decoded
    }
}
