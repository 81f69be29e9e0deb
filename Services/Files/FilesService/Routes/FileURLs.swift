/// The URLs answers carry: where a client downloads a file, under the public base URL and the
/// prefix the client addressed the app by.
struct FileURLs: Sendable {
    /// The gateway's public base URL, without a trailing slash.
    let publicURL: String

    /// The absolute URL of `path` for a client that used `prefix` (`/{appId}/{apiKey}`).
    func url(of path: FilePath, prefix: String) -> String {
        publicURL + prefix + "/files/" + path.names.map(Self.encode).joined(separator: "/")
    }

    /// `text` percent-encoded for a path segment: RFC 3986 unreserved characters stay.
    static func encode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let digits = Array("0123456789ABCDEF".unicodeScalars)
                encoded.unicodeScalars.append("%")
                encoded.unicodeScalars.append(digits[Int(byte >> 4)])
                encoded.unicodeScalars.append(digits[Int(byte & 0xF)])
            }
        }
        return encoded
    }
}
