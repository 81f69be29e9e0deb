import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

/// A file's bytes as HTTP answers them: validators (`etag` names the stored object, which a
/// change always replaces; `last-modified`), `304` for a matching `if-none-match` or
/// `if-modified-since`, one `range` (`206`, or `416` when it lies past the end; several ranges
/// or a stale `if-range` get the whole file), and `content-disposition` for `?download=true`.
/// When the gateway says it reads the local store itself, a download answers where the bytes
/// lie instead of the bytes.
struct Download {
    let entry: FileEntry
    let storage: any FileStorage
    let app: String

    /// The entity tag of the file's current bytes.
    var etag: String { "\"\(entry.storageKey ?? "")\"" }

    /// The answer to `request`, its body read from storage as the client takes it.
    func response(to request: Request, eventLoop: any EventLoop) -> Response {
        var headers: HTTPFields = [
            .eTag: etag, .lastModified: HTTPDate.format(milliseconds: entry.updated), .acceptRanges: "bytes",
            // Browsers must not guess a type other than the one declared (an upload that looks
            // like HTML).
            .contentTypeOptions: "nosniff",
        ]
        if notModified(request.headers) { return Response(status: .notModified, headers: headers) }
        headers[.contentType] = entry.contentType ?? MediaTypes.type(ofName: entry.path.name)
        if request.uri.queryParameters["download"].map({ $0.lowercased() == "true" }) == true {
            headers[.contentDisposition] = Self.attachment(entry.path.name)
        }
        var range = 0..<entry.size
        var status = HTTPResponse.Status.ok
        // A stale If-Range means the whole file, whatever the range asked (RFC 9110 §13.1.5).
        let asked = ifRangeHolds(request.headers) ? ByteRange.parse(request.headers[.range], size: entry.size) : .whole
        switch asked {
        case .whole: break
        case .unsatisfiable:
            headers[.contentRange] = "bytes */\(entry.size)"
            headers[.contentLength] = "0"
            return Response(status: .rangeNotSatisfiable, headers: headers)
        case .part(let part):
            range = part
            status = .partialContent
            headers[.contentRange] = "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(entry.size)"
        }
        if request.headers[.fileDirect] == "1", !range.isEmpty,
            let location = storage.localLocation(app: app, key: entry.storageKey ?? "")
        {
            // The gateway reads the same store: it sends the bytes (and their length) itself.
            headers[.fileLocation] = location
            headers[.fileRange] = "\(range.lowerBound)-\(range.upperBound)"
            return Response(status: status, headers: headers)
        }
        headers[.contentLength] = "\(range.count)"
        let body = Self.body(
            storage: storage, app: app, key: entry.storageKey ?? "", range: range, eventLoop: eventLoop)
        return Response(status: status, headers: headers, body: body)
    }

    /// `range` of stored object `key`, read as the connection on `eventLoop` takes it.
    static func body(storage: any FileStorage, app: String, key: String, range: Range<Int64>, eventLoop: any EventLoop)
        -> ResponseBody
    {
        ResponseBody(contentLength: Int(range.count)) { writer in
            try await storage.read(app: app, key: key, range: range) { chunk in
                try await writer.write(chunk)
                // Wait until the event loop has taken the chunk, so reading keeps the pace of
                // the connection instead of queueing the file in memory.
                try await eventLoop.submit {}.get()
            }
            try await writer.finish(nil)
        }
    }

    /// Whether a conditional GET finds the client's copy current: `if-none-match` decides
    /// when sent, else `if-modified-since` (to the second).
    private func notModified(_ headers: HTTPFields) -> Bool {
        if let tags = headers[.ifNoneMatch] {
            return tags.split(separator: ",").contains { tag in
                let tag = tag.drop(while: { $0 == " " }).trimmingPrefix("W/")
                return tag == "*" || tag == etag
            }
        }
        if let since = headers[.ifModifiedSince].flatMap(HTTPDate.parse) {
            return entry.updated / 1000 <= since
        }
        return false
    }

    /// Whether a range applies: without `if-range`, or with one naming the current version.
    private func ifRangeHolds(_ headers: HTTPFields) -> Bool {
        guard let condition = headers[.ifRange] else { return true }
        if condition.hasPrefix("\"") { return condition == etag }
        return HTTPDate.parse(condition) == entry.updated / 1000
    }

    /// `attachment` with the name as ASCII (others replaced) and as UTF-8 (RFC 6266).
    static func attachment(_ name: String) -> String {
        let ascii = String(
            name.unicodeScalars.map { $0.isASCII && $0 != "\"" && $0 != "\\" && $0.value >= 0x20 ? Character($0) : "_" }
        )
        return "attachment; filename=\"\(ascii)\"; filename*=UTF-8''\(PercentEncoding.encodeSegment(name))"
    }
}

/// One `Range: bytes=…` request against a file of `size` bytes.
enum ByteRange: Equatable {
    /// No range, an unparsable one, or several: the whole file.
    case whole
    /// The bytes to send.
    case part(Range<Int64>)
    /// A range starting past the end.
    case unsatisfiable

    static func parse(_ header: String?, size: Int64) -> ByteRange {
        guard let header, header.hasPrefix("bytes="), !header.contains(",") else { return .whole }
        let spec = header.dropFirst(6)
        guard let dash = spec.firstIndex(of: "-") else { return .whole }
        let first = spec[..<dash]
        let last = spec[spec.index(after: dash)...]
        if first.isEmpty {
            // A suffix: the last N bytes.
            guard let count = Int64(last), count >= 0 else { return .whole }
            guard count > 0, size > 0 else { return .unsatisfiable }
            return .part(max(0, size - count)..<size)
        }
        guard let start = Int64(first), start >= 0 else { return .whole }
        let end: Int64
        if last.isEmpty {
            end = size - 1
        } else {
            guard let value = Int64(last), value >= start else { return .whole }
            end = min(value, size - 1)
        }
        guard start < size else { return .unsatisfiable }
        return .part(start..<(end + 1))
    }
}
