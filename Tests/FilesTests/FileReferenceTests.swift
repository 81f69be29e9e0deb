import Foundation
import InternalProtocol
import NIOHTTP1
import Testing
import TestSupport

/// `FILE_REF` columns: they keep a file's path and answer its URL, which downloads the file.
@Suite(.timeLimit(.minutes(5))) struct FileReferenceTests {
    @Test func fileReferenceColumnsKeepPathsAndAnswerURLs() async throws {
        try await FileCluster.with { files async throws in
            let cluster = files.cluster
            func data(_ method: HTTPMethod, _ path: String, _ body: String? = nil, key: APIKeyKind = .rest) async throws -> HTTPResult {
                try await HTTPTestClient.send(
                    method, cluster.gatewayURL + cluster.prefix(key) + "/data/" + path,
                    headers: body == nil ? [] : [("Content-Type", "application/json")], body: body.map { Data($0.utf8) })
            }
            let upload = try await files.upload("pics/my photo.png", Array("image bytes".utf8))
            let url = try #require(upload.json["fileURL"] as? String)
            #expect(url == FileCluster.publicURL + cluster.prefix() + "/files/pics/my%20photo.png")
            let schema = try await data(
                .POST, "Photos/schema", #"[{"name": "image", "type": "FILE_REF"}, {"name": "title", "type": "STRING"}]"#,
                key: .serverCode)
            #expect(schema.status == 200, "\(schema.text)")

            // The URL an upload answered, the path with or without its slash: the same file.
            for (title, value) in [("url", url), ("path", "pics/my photo.png"), ("slash", "/pics/my photo.png")] {
                let saved = try await data(.POST, "Photos", #"{"title": "\#(title)", "image": "\#(value)"}"#)
                #expect(saved.status == 200 && saved.json["image"] as? String == url, "\(title): \(saved.text)")
            }
            let none = try await data(.POST, "Photos", #"{"title": "none", "image": null}"#)
            #expect(none.status == 200 && none.json["image"] is NSNull, "\(none.text)")

            // Kept as the path: where clauses match it by path or by URL.
            for condition in ["image = 'pics/my photo.png'", "image = '\(url)'"] {
                let query = condition.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
                let found = try await data(.GET, "Photos?where=\(query)&sortBy=title")
                let images = (try JSONSerialization.jsonObject(with: found.body) as? [[String: Any]])?.map { $0["image"] as? String }
                #expect(images == [url, url, url], "\(condition): \(found.text)")
            }

            // The answered URL downloads the file.
            let download = try await HTTPTestClient.send(.GET, url.replacingOccurrences(of: FileCluster.publicURL, with: cluster.gatewayURL))
            #expect(download.status == 200 && download.text == "image bytes")

            // Anything that names no file of the app is refused, and nothing is saved.
            for value in [#""../etc/passwd""#, #""https://elsewhere.example/x.png""#, #""pics/%2e%2e/x""#, #""/""#, "5",
                          #""a\\b.png""#] {
                let refused = try await data(.POST, "Photos", #"{"title": "bad", "image": \#(value)}"#)
                #expect(refused.status == 400 && refused.json["code"] != nil, "\(value): \(refused.text)")
            }
            #expect(try await data(.GET, "Photos/count").text == "4")
        }
    }
}
