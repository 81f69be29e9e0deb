import Hummingbird
import InternalProtocol
import ServiceRuntime

/// What a request under `files/` names: the app, the path after `files/` normalised, whether
/// it ended with a slash (a directory), and its query.
struct FileRequest {
    /// The caller.
    let identity: Identity
    /// The app whose tree the path is in.
    var app: String { identity.appId }
    /// The path after `files/`.
    let path: FilePath
    /// The raw path ended with `/`.
    let namesDirectory: Bool
    /// The prefix the client addressed the app by, for URLs in answers.
    let publicPrefix: String
    /// The query's parameters, decoded.
    let query: [String: String]

    /// A request naming `path` directly (not by its URL).
    init(identity: Identity, path: FilePath, publicPrefix: String, query: [String: String]) {
        self.identity = identity
        self.path = path
        namesDirectory = false
        self.publicPrefix = publicPrefix
        self.query = query
    }

    init(_ request: Request, context: PublicRequestContext) throws(ErrorEnvelope) {
        identity = context.identity
        publicPrefix = context.call.publicPrefix ?? "/\(context.identity.appId)"
        let raw = request.uri.path
        let rest = raw.hasPrefix("/files/") ? raw.dropFirst("/files/".count) : ""
        path = try FilePath(encoded: rest)
        namesDirectory = rest.isEmpty || rest.hasSuffix("/")
        var query: [String: String] = [:]
        for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
        self.query = query
    }

    /// A `true`/`false` query flag (absent: `default`); anything else is a 400.
    func flag(_ name: String, default value: Bool = false) throws(ErrorEnvelope) -> Bool {
        guard let text = query[name] else { return value }
        switch text.lowercased() {
        case "true": return true
        case "false": return false
        default: throw ErrorEnvelope.badRequest("Query parameter '\(name)' must be true or false")
        }
    }

    /// A whole-number query parameter within `range` (absent: `default`); anything else is a 400.
    func integer(_ name: String, default value: Int, in range: ClosedRange<Int>) throws(ErrorEnvelope) -> Int {
        guard let text = query[name] else { return value }
        guard let number = Int(text), range.contains(number) else {
            throw ErrorEnvelope.badRequest(
                "Query parameter '\(name)' must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return number
    }

    /// The path after a command's first `count` names (`binary/`, `append/`), naming a file.
    func commandPath(dropping count: Int) throws(ErrorEnvelope) -> FilePath {
        guard !namesDirectory else { throw FileError.missingParameter("file name") }
        return try FilePath(decoded: path.names.dropFirst(count).joined(separator: "/"))
    }

    /// The path, which must name a file (not the root, no trailing slash): 6028 otherwise.
    func filePath() throws(ErrorEnvelope) -> FilePath {
        guard !path.isRoot, !namesDirectory else { throw FileError.missingParameter("file name") }
        return path
    }
}
