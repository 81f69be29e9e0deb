import Hummingbird
import InternalProtocol
import NIOCore
import _NIOFileSystem

/// Downloads the gateway sends from the local file store itself (`BAAS_GATEWAY_FILES_ROOT`,
/// the directory files-service writes to, mounted here read-only): files-service checks the
/// request and answers status and headers with where the bytes lie, and the gateway reads them
/// from disk, saving the internal hop (its encryption, framing and buffers) for every byte.
struct DirectFiles: Sendable {
    /// The file store's root.
    let root: String
    /// How much one read takes from disk (the reader keeps a few ahead).
    static let chunkLength = ByteCount.kibibytes(256)

    /// `answer` with its body read from `location` (which must be an object of `app`), or an
    /// internal error for a location that is not one.
    func response(_ answer: Response, location: (path: String, range: Range<Int64>), app: String?) async throws
        -> Response
    {
        guard let app, Self.isObject(location.path, of: app) else { throw ErrorEnvelope.internalError }
        var headers = answer.headers
        headers[.contentLength] = "\(location.range.count)"
        let (file, range) = (_NIOFileSystem.FilePath(root).appending(location.path), location.range)
        // A store this gateway cannot see (a missing mount) is an error answer, not a success
        // cut short after its head.
        guard let info = try? await FileSystem.shared.info(forFileAt: file), info.size >= range.upperBound else {
            throw ErrorEnvelope.internalError
        }
        let body = ResponseBody(contentLength: Int(range.count)) { writer in
            try await FileSystem.shared.withFileHandle(forReadingAt: file) { handle in
                for try await chunk in handle.readChunks(in: range, chunkLength: Self.chunkLength) {
                    try await writer.write(chunk)
                }
            }
            try await writer.finish(nil)
        }
        return Response(status: answer.status, headers: headers, body: body)
    }

    /// Whether `path` is `{app}/{ab}/{key}`: a stored object's place (32 lower-case hex digits,
    /// foldered by their first two) in the app's own folder, and nothing else.
    static func isObject(_ path: String, of app: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == app, !app.isEmpty, !app.contains("."), parts[2].utf8.count == 32 else {
            return false
        }
        let hex = parts[2].utf8.allSatisfy {
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0)
        }
        return hex && parts[1] == parts[2].prefix(2)
    }
}
