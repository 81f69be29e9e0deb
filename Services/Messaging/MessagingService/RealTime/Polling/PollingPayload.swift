import NIOCore

/// Engine.IO's long-polling bodies: several packets in one. Revision 4 separates them with the
/// record separator (0x1E); revision 3 prefixes each with its length in UTF-16 code units and a
/// colon (`6:42/a,…`), and python-engineio 3 posts them in its binary framing (0x00, the
/// length as one byte per decimal digit, 0xFF, the packet).
enum PollingPayload {
    static let separator: Character = "\u{1e}"

    /// `packets` as one answer body for `version`.
    static func encode(_ packets: [String], version: EngineIOVersion) -> String {
        switch version {
        case .v4: packets.joined(separator: String(separator))
        case .v3: packets.map { "\($0.utf16.count):\($0)" }.joined()
        }
    }

    /// The packets of a POSTed body; nil when it is not a payload of `version`.
    static func decode(_ body: ByteBuffer, version: EngineIOVersion) -> [String]? {
        let bytes = Array(body.readableBytesView)
        if version == .v3, bytes.first == 0x00 || bytes.first == 0x01 { return decodeBinary(bytes) }
        let text = String(decoding: bytes, as: UTF8.self)
        switch version {
        case .v4: return text.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
        case .v3: return decodeLengthPrefixed(text)
        }
    }

    /// `<len>:<packet>` repeated, `len` in UTF-16 code units.
    private static func decodeLengthPrefixed(_ text: String) -> [String]? {
        var packets: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            guard let colon = rest.firstIndex(of: ":"), let length = Int(rest[..<colon]), length >= 0, length <= 1 << 20
            else { return nil }
            let body = rest[rest.index(after: colon)...]
            var end = body.startIndex
            var units = 0
            while units < length {
                guard end < body.endIndex else { return nil }
                units += body[end].utf16.count
                end = body.index(after: end)
            }
            guard units == length else { return nil }
            packets.append(String(body[..<end]))
            rest = body[end...]
        }
        return packets
    }

    /// python-engineio 3's binary framing: 0x00 (text) or 0x01 (binary), decimal digits as
    /// bytes, 0xFF, then the packet; only text packets are accepted.
    private static func decodeBinary(_ bytes: [UInt8]) -> [String]? {
        var packets: [String] = []
        var index = 0
        while index < bytes.count {
            guard bytes[index] == 0x00 else { return nil }
            index += 1
            var length = 0
            while index < bytes.count, bytes[index] != 0xFF {
                guard bytes[index] <= 9, length <= 1 << 20 else { return nil }
                length = length * 10 + Int(bytes[index])
                index += 1
            }
            guard index < bytes.count, index + 1 + length <= bytes.count else { return nil }
            index += 1
            packets.append(String(decoding: bytes[index..<index + length], as: UTF8.self))
            index += length
        }
        return packets
    }
}
