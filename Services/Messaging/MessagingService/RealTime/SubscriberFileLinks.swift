import DataEngine
import InternalProtocol

/// How one real-time connection receives `FILE_REF` values. Change events carry them as paths,
/// since a writer's URL would hand the writer's API key to every subscriber; each connection
/// gets the URLs its own REST answers would hold, under the key it connected with.
struct SubscriberFileLinks: Sendable, Hashable {
    /// `{public URL}/{appId}/` in lower case: where this server's URLs of the app's files
    /// start, whatever key follows.
    let appFiles: String
    /// `{public URL}/{appId}/{apiKey}/files/`; nil for a connection without a key, which
    /// receives paths.
    let base: String?

    /// The links of a connection to app `appId` with `apiKey` (the `apiKey` of its query,
    /// which the gateway resolved it by), file URLs starting at `publicURL`.
    init(publicURL: String, appId: String, apiKey: String?) {
        let appRoot = publicURL + "/" + appId + "/"
        appFiles = appRoot.lowercased()
        base = apiKey.flatMap { $0.isEmpty ? nil : appRoot + PercentEncoding.encodeSegment($0) + "/files/" }
    }

    /// `object` with the values of its `FILE_REF` `columns` as this connection receives them.
    func rendering(_ columns: [String], of object: JSONObject) -> JSONObject {
        var rendered = object
        for column in columns {
            guard case .string(let stored)? = object[column] else { continue }
            rendered[column] = .string(value(stored))
        }
        return rendered
    }

    /// One `FILE_REF` value of an event as this connection receives it.
    func value(_ stored: String) -> String {
        // An event logged before events kept paths holds its writer's URL, key and all: only
        // the path in it may go on.
        if stored.hasPrefix("http"), stored.lowercased().hasPrefix(appFiles), let path = FilePath(fileReference: stored)
        {
            return base.map { $0 + path.urlPath } ?? path.description
        }
        return base.map { FileLinks.url(of: stored, base: $0) } ?? stored
    }
}
