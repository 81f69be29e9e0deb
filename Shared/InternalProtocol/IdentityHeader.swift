import Foundation

extension Identity {
    /// The identity as an ``InternalHeader/identity`` header value (base64url of its JSON).
    public func headerValue() throws -> String {
        let json = try JSONEncoder.sortedKeys.encode(self)
        return json.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Reads an identity from an ``InternalHeader/identity`` header value.
    public init(headerValue: String) throws {
        var base64 = headerValue.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let json = Data(base64Encoded: base64) else {
            throw ErrorEnvelope.badRequest("Malformed identity header")
        }
        self = try JSONDecoder().decode(Identity.self, from: json)
    }
}

extension JSONEncoder {
    /// An encoder with sorted keys, so equal values give equal bytes.
    public static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
