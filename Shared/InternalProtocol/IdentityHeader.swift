import Foundation

extension Identity {
    /// The identity as an ``InternalHeader/identity`` header value (base64url of its JSON),
    /// encoded once per identity while it is among the last few thousand.
    package func headerValue() throws -> String {
        try Self.encoded.value(for: self) { try $0.encodedHeaderValue() }
    }

    /// Reads an identity from an ``InternalHeader/identity`` header value, decoding each value
    /// once while it is among the last few thousand.
    package init(headerValue: String) throws {
        self = try Self.decoded.value(for: headerValue) { try Identity(decodingHeaderValue: $0) }
    }

    private static let encoded = BoundedMemo<Identity, String>(capacity: 4_096)
    private static let decoded = BoundedMemo<String, Identity>(capacity: 4_096)

    private func encodedHeaderValue() throws -> String {
        let base64 = try Self.encoder.encode(self).base64EncodedString()
        // Byte-wise: Foundation's string replacement was 8 % of the gateway's CPU per request.
        return String(
            decoding: base64.utf8.compactMap { byte -> UInt8? in
                switch byte {
                case UInt8(ascii: "+"): UInt8(ascii: "-")
                case UInt8(ascii: "/"): UInt8(ascii: "_")
                case UInt8(ascii: "="): nil
                default: byte
                }
            }, as: UTF8.self)
    }

    private init(decodingHeaderValue headerValue: String) throws {
        var base64 = headerValue.utf8.map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "-"): UInt8(ascii: "+")
            case UInt8(ascii: "_"): UInt8(ascii: "/")
            default: byte
            }
        }
        base64 += repeatElement(UInt8(ascii: "="), count: (4 - base64.count % 4) % 4)
        guard let json = Data(base64Encoded: Data(base64)) else {
            throw ErrorEnvelope.badRequest("Malformed identity header")
        }
        self = try JSONDecoder().decode(Identity.self, from: json)
    }

    private static let encoder = JSONEncoder.sortedKeys
}

extension JSONEncoder {
    /// An encoder with sorted keys, so equal values give equal bytes.
    package static var sortedKeys: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }
}
