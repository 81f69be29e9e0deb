import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// Objects in an S3-compatible bucket (AWS, MinIO, Ceph…), for deployments with several
/// files-service replicas: key `APP/KEY`, path-style URLs (`endpoint/bucket/APP/KEY`), every
/// request signed with Signature V4. Uploads stream through one bounded part buffer: a body
/// smaller than a part is one `PutObject`, a larger one a multipart upload that is aborted if
/// the body fails, so a failed write leaves nothing.
package struct S3Storage: FileStorage {
    /// Where and as whom to store.
    package struct Configuration: Sendable {
        /// Scheme, host and port, e.g. `https://s3.eu-west-1.amazonaws.com`.
        package var endpoint: String
        package var bucket: String
        package var region: String
        package var accessKeyID: String
        package var secretAccessKey: String

        package init(endpoint: String, bucket: String, region: String, accessKeyID: String, secretAccessKey: String) {
            self.endpoint = String(endpoint.reversed().drop { $0 == "/" }.reversed())
            self.bucket = bucket
            self.region = region
            self.accessKeyID = accessKeyID
            self.secretAccessKey = secretAccessKey
        }
    }

    /// The size of each uploaded part (S3's minimum is 5 MiB), and so the most an upload holds.
    static let partSize = 8 << 20

    let configuration: Configuration
    let signer: SigV4
    let http: HTTPClient
    let host: String

    /// Storage in the configured bucket, calling it with `http`.
    package init(configuration: Configuration, http: HTTPClient = .shared) {
        self.configuration = configuration
        signer = SigV4(
            accessKeyID: configuration.accessKeyID, secretAccessKey: configuration.secretAccessKey,
            region: configuration.region)
        self.http = http
        host = String(configuration.endpoint.split(separator: "://", maxSplits: 1).last ?? "")
    }

    package func write<Body: AsyncSequence>(_ body: Body, app: String, key: String) async throws -> Int64
    where Body.Element == ByteBuffer {
        let upload = S3Upload(storage: self, path: objectPath(app: app, key: key))
        do {
            for try await chunk in body { try await upload.append(chunk) }
            return try await upload.finish()
        } catch {
            await upload.abort()
            throw error
        }
    }

    package func compose(app: String, sources: [String], key: String) async throws -> Int64 {
        let upload = S3Upload(storage: self, path: objectPath(app: app, key: key))
        do {
            for source in sources {
                try await get(app: app, key: source, range: nil) { try await upload.append($0) }
            }
            return try await upload.finish()
        } catch {
            await upload.abort()
            throw error
        }
    }

    package func read(
        app: String, key: String, range: Range<Int64>, into consume: (ByteBuffer) async throws -> Void
    ) async throws {
        guard !range.isEmpty else { return }
        try await get(app: app, key: key, range: range, into: consume)
    }

    package func delete(app: String, key: String) async throws {
        try await Self.discard(send("DELETE", objectPath(app: app, key: key)))
    }

    /// Creates the bucket (set-up and tests); an existing one of ours is fine.
    package func createBucket() async throws {
        try await Self.discard(send("PUT", "/" + SigV4.encode(configuration.bucket), accepting: [200, 409]))
    }

    /// Every object key in the bucket (tests and operators), following continuation tokens.
    package func keys() async throws -> [String] {
        var keys: [String] = []
        var token: String?
        repeat {
            var query = [("list-type", "2")]
            if let token { query.append(("continuation-token", token)) }
            let xml = try await text(of: send("GET", "/" + SigV4.encode(configuration.bucket), query: query))
            keys += XMLText.all("Key", in: xml)
            token = XMLText.first("NextContinuationToken", in: xml)
        } while token != nil
        return keys
    }

    /// Multipart uploads begun and neither completed nor aborted.
    package func pendingUploads() async throws -> [String] {
        let xml = try await text(of: send("GET", "/" + SigV4.encode(configuration.bucket), query: [("uploads", "")]))
        return XMLText.all("UploadId", in: xml)
    }

    func objectPath(app: String, key: String) -> String {
        "/" + [configuration.bucket, app, key].map(SigV4.encode).joined(separator: "/")
    }

    private func get(
        app: String, key: String, range: Range<Int64>?, into consume: (ByteBuffer) async throws -> Void
    ) async throws {
        var headers: [(String, String)] = []
        if let range { headers.append(("range", "bytes=\(range.lowerBound)-\(range.upperBound - 1)")) }
        let response = try await send("GET", objectPath(app: app, key: key), headers: headers)
        for try await chunk in response.body { try await consume(chunk) }
    }

    /// A signed request; a status outside `accepting` (2xx by default) is an ``S3Error``.
    func send(
        _ method: String, _ path: String, query: [(String, String)] = [], headers: [(String, String)] = [],
        body: ByteBuffer? = nil, accepting: Set<UInt> = Set(200..<300)
    ) async throws -> HTTPClientResponse {
        let queryString = query.map { "\(SigV4.encode($0.0))=\(SigV4.encode($0.1))" }.joined(separator: "&")
        var request = HTTPClientRequest(
            url: configuration.endpoint + path + (queryString.isEmpty ? "" : "?" + queryString))
        request.method = HTTPMethod(rawValue: method)
        let signed = signer.sign(
            method: method, path: path, query: query, headers: headers + [("host", host)],
            payloadHash: SigV4.unsignedPayload, date: Date())
        for (name, value) in headers + signed { request.headers.add(name: name, value: value) }
        if let body {
            request.headers.add(name: "content-length", value: "\(body.readableBytes)")
            request.body = .bytes(body)
        }
        let response = try await http.execute(request, timeout: .minutes(5))
        guard accepting.contains(response.status.code) else {
            // Only the error's code is read from the (small) XML answer.
            let detail = try? await response.body.collect(upTo: 1 << 16)
            throw S3Error(
                status: response.status.code, code: detail.flatMap { XMLText.first("Code", in: String(buffer: $0)) })
        }
        return response
    }

    /// The text of one of S3's XML answers (an upload id, a page of at most 1,000 keys).
    func text(of response: HTTPClientResponse) async throws -> String {
        String(buffer: try await response.body.collect(upTo: Self.answerLimit))
    }

    /// The largest XML answer read (a page of 1,000 keys of ours is under 200 KiB).
    static let answerLimit = 1 << 20

    /// Reads an answer's body to its end without keeping it.
    static func discard(_ response: HTTPClientResponse) async throws {
        for try await _ in response.body {}
    }
}

/// An S3 answer outside the expected statuses (its XML error code, if it sent one).
struct S3Error: Error, CustomStringConvertible {
    let status: UInt
    let code: String?
    var description: String { "S3 answered \(status) \(code ?? "")" }
}

/// One object being uploaded: bytes gather in a part buffer; the first full part starts a
/// multipart upload, each further one is sent as it fills.
final class S3Upload {
    private let storage: S3Storage
    private let path: String
    private var part = ByteBuffer()
    private var uploadID: String?
    private var etags: [String] = []
    private var size: Int64 = 0

    init(storage: S3Storage, path: String) {
        self.storage = storage
        self.path = path
    }

    func append(_ chunk: ByteBuffer) async throws {
        var chunk = chunk
        size += Int64(chunk.readableBytes)
        part.writeBuffer(&chunk)
        if part.readableBytes >= S3Storage.partSize { try await sendPart() }
    }

    /// Completes the object; answers its size.
    func finish() async throws -> Int64 {
        guard let uploadID else {
            try await S3Storage.discard(storage.send("PUT", path, body: part))
            return size
        }
        if part.readableBytes > 0 { try await sendPart() }
        let parts = etags.enumerated().map {
            "<Part><PartNumber>\($0.offset + 1)</PartNumber><ETag>\($0.element)</ETag></Part>"
        }
        let body = ByteBuffer(string: "<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>")
        let xml = try await storage.text(of: storage.send("POST", path, query: [("uploadId", uploadID)], body: body))
        // S3 may answer 200 and still fail the completion in the body.
        if xml.contains("<Error>") { throw S3Error(status: 200, code: XMLText.first("Code", in: xml)) }
        return size
    }

    /// Abandons a multipart upload begun (its parts are dropped by S3).
    func abort() async {
        guard let uploadID else { return }
        _ = try? await S3Storage.discard(storage.send("DELETE", path, query: [("uploadId", uploadID)]))
    }

    private func sendPart() async throws {
        if uploadID == nil {
            let xml = try await storage.text(of: storage.send("POST", path, query: [("uploads", "")]))
            guard let id = XMLText.first("UploadId", in: xml) else { throw S3Error(status: 200, code: "NoUploadId") }
            uploadID = id
        }
        let number = etags.count + 1
        let response = try await storage.send(
            "PUT", path, query: [("partNumber", "\(number)"), ("uploadId", uploadID!)], body: part)
        guard let etag = response.headers.first(name: "etag") else { throw S3Error(status: 200, code: "NoETag") }
        try await S3Storage.discard(response)
        etags.append(etag)
        part = ByteBuffer()
    }
}

/// The text of simple XML elements in S3's answers.
enum XMLText {
    static func first(_ element: String, in xml: String) -> String? { all(element, in: xml).first }

    static func all(_ element: String, in xml: String) -> [String] {
        var values: [String] = []
        var rest = Substring(xml)
        while let open = rest.range(of: "<\(element)>"), let close = rest[open.upperBound...].range(of: "</\(element)>")
        {
            values.append(unescape(String(rest[open.upperBound..<close.lowerBound])))
            rest = rest[close.upperBound...]
        }
        return values
    }

    private static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&lt;", with: "<")
            .replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&apos;", with: "'")
            .replacingOccurrences(of: "&amp;", with: "&")
    }
}
