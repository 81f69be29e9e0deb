import Foundation
import Hummingbird
import HummingbirdCore
import InternalProtocol
import NIOCore

/// One public request on a buffered route, its body already read within the route's limit.
package struct PublicCall: Sendable {
    /// The public method.
    package var method: HTTPRequest.Method
    /// The public path and query, as the client sent them after the app prefix.
    package var uri: URI
    /// The request's headers (those the gateway passes on).
    package var headers: HTTPFields
    /// Captured `:name` segments, percent-decoded.
    package var parameters: [String: String]
    /// The public body, unchanged.
    package var body: ByteBuffer
    /// Who the request acts for.
    package var identity: Identity
    /// Request id, deadline and client address.
    package var context: CallContext

    /// The query string's name/value pairs, `+` and percent escapes decoded, in order; a
    /// malformed escape is a 400.
    package var queryItems: [(name: String, value: String)] {
        get throws { try Self.pairs(uri.query ?? "") }
    }

    /// An `application/x-www-form-urlencoded` body's pairs, decoded as the query string's are.
    package var formItems: [(name: String, value: String)] {
        get throws { try Self.pairs(String(decoding: body.readableBytesView, as: UTF8.self)) }
    }

    /// Whether the body is a form (`application/x-www-form-urlencoded`) rather than JSON.
    package var hasFormBody: Bool {
        headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true
    }

    /// At most this many pairs in a query string or a form (as many keys as a JSON body's object).
    package static let maximumPairs = 10_000

    private static func pairs(_ text: String) throws -> [(name: String, value: String)] {
        guard !text.isEmpty else { return [] }
        let pairs = text.split(separator: "&", maxSplits: maximumPairs, omittingEmptySubsequences: true)
        guard pairs.count <= maximumPairs else {
            throw ErrorEnvelope.badRequest("A query string or form has at most \(maximumPairs) fields")
        }
        return try pairs.map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (try decode(parts[0]), parts.count > 1 ? try decode(parts[1]) : "")
        }
    }

    /// A path parameter the route declares (empty when the route has no such parameter).
    package func parameter(_ name: String) -> String {
        parameters[name] ?? ""
    }

    /// The body as JSON text's bytes, or nil when it is empty or only whitespace.
    package var nonBlankBody: [UInt8]? {
        let bytes = Array(body.readableBytesView)
        return bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) ? bytes : nil
    }

    private static func decode(_ text: Substring) throws -> String {
        guard let decoded = PercentEncoding.decode(text, plusAsSpace: true) else {
            throw ErrorEnvelope.badRequest("Malformed percent-encoding in the query string or form")
        }
        return decoded
    }
}

extension RequestContext {
    /// The route's path parameters, percent-decoded (a malformed escape is kept as sent).
    package var decodedParameters: [String: String] {
        var decoded: [String: String] = [:]
        for (name, value) in parameters { decoded[String(name)] = PercentEncoding.decode(value) ?? String(value) }
        return decoded
    }

    /// One path parameter, percent-decoded; nil when missing, empty or malformed.
    package func decodedParameter(_ name: String) -> String? {
        guard let raw = parameters.get(name), let decoded = PercentEncoding.decode(raw), !decoded.isEmpty else {
            return nil
        }
        return decoded
    }
}
