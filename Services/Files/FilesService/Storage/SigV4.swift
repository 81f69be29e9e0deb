import Crypto
import Foundation
import InternalProtocol

/// AWS Signature Version 4 for S3 requests: the canonical request, the string to sign and the
/// derived key, as AWS's documentation defines them.
struct SigV4: Sendable {
    let accessKeyID: String
    let secretAccessKey: String
    let region: String
    var service = "s3"

    /// The payload hash of a request whose body is not hashed (allowed by S3 over any transport).
    static let unsignedPayload = "UNSIGNED-PAYLOAD"

    /// The headers to add to a request: `x-amz-date`, `x-amz-content-sha256` and
    /// `authorization`. `path` is the URI path already percent-encoded; `query` and `headers`
    /// unencoded (`host` among the headers).
    func sign(
        method: String, path: String, query: [(String, String)], headers: [(String, String)], payloadHash: String,
        date: Date
    ) -> [(String, String)] {
        let (amzDate, day) = Self.timestamps(date)
        var all = headers.map { ($0.0.lowercased(), $0.1.trimmingCharacters(in: .whitespaces)) }
        all.append(("x-amz-date", amzDate))
        all.append(("x-amz-content-sha256", payloadHash))
        all.sort { $0.0 < $1.0 }
        let signedHeaders = all.map(\.0).joined(separator: ";")
        let canonicalQuery = query.map { (Self.encode($0.0), Self.encode($0.1)) }.sorted { $0 < $1 }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
        let canonicalRequest = [
            method, path, canonicalQuery, all.map { "\($0.0):\($0.1)\n" }.joined(), signedHeaders, payloadHash,
        ].joined(separator: "\n")
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let stringToSign = [
            "AWS4-HMAC-SHA256", amzDate, scope, Self.hex(SHA256.hash(data: Data(canonicalRequest.utf8))),
        ].joined(separator: "\n")
        var key = SymmetricKey(data: Data("AWS4\(secretAccessKey)".utf8))
        for part in [day, region, service, "aws4_request"] {
            key = SymmetricKey(data: Data(HMAC<SHA256>.authenticationCode(for: Data(part.utf8), using: key)))
        }
        let signature = Self.hex(HMAC<SHA256>.authenticationCode(for: Data(stringToSign.utf8), using: key))
        let authorization =
            "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope),SignedHeaders=\(signedHeaders),Signature=\(signature)"
        return [("x-amz-date", amzDate), ("x-amz-content-sha256", payloadHash), ("authorization", authorization)]
    }

    /// `20130524T000000Z` and `20130524` in UTC.
    static func timestamps(_ date: Date) -> (String, String) {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let day = String(format: "%04d%02d%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday)
        return (day + String(format: "T%02d%02d%02dZ", parts.tm_hour, parts.tm_min, parts.tm_sec), day)
    }

    /// RFC 3986 encoding as SigV4 wants it: unreserved characters kept, everything else `%XX`.
    static func encode(_ text: String) -> String { PercentEncoding.encodeSegment(text) }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}
