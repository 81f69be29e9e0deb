import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// `FILE_REF` columns: they keep a file's path and answer its URL, which downloads the file.
@Suite(.timeLimit(.minutes(20))) struct FileReferenceTests {
    @Test func fileReferenceColumnsKeepPathsAndAnswerURLs() async throws {
        try await FileCluster.with { files async throws in
            let cluster = files.cluster
            func data(_ method: HTTPMethod, _ path: String, _ body: String? = nil, key: APIKeyKind = .rest) async throws
                -> HTTPResult
            {
                try await files.cluster.send(method, "/data/" + path, body, key: key)
            }
            let upload = try await files.upload("pics/my photo.png", Array("image bytes".utf8))
            let url = try #require(upload.json["fileURL"] as? String)
            #expect(url == FileCluster.publicURL + cluster.prefix() + "/files/pics/my%20photo.png")
            let schema = try await data(
                .POST, "Photos/schema",
                #"[{"name": "image", "type": "FILE_REF"}, {"name": "title", "type": "STRING"}]"#,
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
                let images = (try JSONSerialization.jsonObject(with: found.body) as? [[String: Any]])?.map {
                    $0["image"] as? String
                }
                #expect(images == [url, url, url], "\(condition): \(found.text)")
            }

            // Selected by name, the column answers the URL too.
            let selected = try await data(.GET, "Photos?props=image&where=title%3D%27url%27")
            #expect(selected.text.contains(#""image":"\#(url)""#), "\(selected.text)")

            // The answered URL downloads the file.
            let download = try await HTTPTestClient.send(
                .GET, url.replacingOccurrences(of: FileCluster.publicURL, with: cluster.gatewayURL))
            #expect(download.status == 200 && download.text == "image bytes")

            // Anything that names no file of the app is refused, and nothing is saved.
            for value in [
                #""../etc/passwd""#, #""https://elsewhere.example/x.png""#, #""pics/%2e%2e/x""#, #""/""#, "5",
                #""a\\b.png""#,
            ] {
                let refused = try await data(.POST, "Photos", #"{"title": "bad", "image": \#(value)}"#)
                #expect(refused.status == 400 && refused.json["code"] != nil, "\(value): \(refused.text)")
            }
            #expect(try await data(.GET, "Photos/count").text == "4")

            // Text saved before the column became FILE_REF: a URL answers as it was, a path with a
            // leading slash as the file's URL.
            for (title, value) in [("old-url", "https://cdn.example/x.png"), ("old-path", "/pics/my photo.png")] {
                #expect(
                    try await data(.POST, "Photos", #"{"title": "\#(title)", "legacy": "\#(value)"}"#).status == 200)
            }
            let altered = try await data(.PUT, "Photos/properties/legacy", #"{"type": "FILE_REF"}"#, key: .serverCode)
            #expect(altered.status == 200, "\(altered.text)")
            let legacy = try await data(.GET, "Photos?where=legacy%20IS%20NOT%20NULL&sortBy=title&props=legacy")
            let values = (try JSONSerialization.jsonObject(with: legacy.body) as? [[String: Any]])?.map {
                $0["legacy"] as? String
            }
            #expect(values == [url, "https://cdn.example/x.png"], "old-path sorts first: \(legacy.text)")
        }
    }

    @Test func quickBloxFileFieldsUploadDownloadReplaceAndDelete() async throws {
        try await FileCluster.with { files async throws in
            let cluster = files.cluster
            func data(_ method: HTTPMethod, _ path: String, _ body: String? = nil, key: APIKeyKind = .rest) async throws
                -> HTTPResult
            {
                try await files.cluster.send(method, "/data/" + path, body, key: key)
            }
            func upload(_ path: String, _ bytes: String, name: String) async throws -> HTTPResult {
                let form = MultipartForm(file: Array(bytes.utf8), name: name)
                return try await HTTPTestClient.send(
                    .POST, cluster.gatewayURL + cluster.prefix() + "/data/" + path,
                    headers: [("Content-Type", form.contentType)], body: Data(form.body))
            }
            let schema = try await data(
                .POST, "Movie/schema", #"[{"name": "image", "type": "FILE_REF"}, {"name": "title", "type": "STRING"}]"#,
                key: .serverCode)
            #expect(schema.status == 200, "\(schema.text)")
            let id = try #require(try await data(.POST, "Movie", #"{"title": "Plus"}"#).json["objectId"] as? String)

            let first = try await upload("Movie/\(id)/file?field_name=image", "first image", name: "plus.png")
            let url = FileCluster.publicURL + cluster.prefix() + "/files/Movie/\(id)/image/plus.png"
            #expect(first.status == 200 && first.json["image"] as? String == url, "\(first.text)")
            let fetched = try await data(.GET, "Movie/\(id)/file?field_name=image")
            #expect(fetched.status == 200 && fetched.text == "first image")
            #expect(fetched.headers.first(name: "content-type") == "image/png")

            // The field's name is matched as the schema's, whatever its case.
            #expect(try await data(.GET, "Movie/\(id)/file?field_name=IMAGE").text == "first image")

            // A new file replaces the old one, which goes.
            let second = try await upload("Movie/\(id)/file?field_name=image", "second image", name: "minus.png")
            #expect(
                second.json["image"] as? String == url.replacingOccurrences(of: "plus.png", with: "minus.png"),
                "\(second.text)")
            #expect(try await data(.GET, "Movie/\(id)/file?field_name=image").text == "second image")
            #expect(try await files.send(.GET, "Movie/\(id)/image/plus.png").json["code"] as? Int == 6000)

            // Bad requests change nothing.
            let notFileField = try await upload("Movie/\(id)/file?field_name=title", "x", name: "x.png")
            #expect(notFileField.status == 400 && notFileField.json["code"] as? Int == 6043, "\(notFileField.text)")
            let noField = try await upload("Movie/\(id)/file", "x", name: "x.png")
            #expect(noField.status == 400 && noField.json["code"] as? Int == 6028, "\(noField.text)")
            let noObject = try await upload("Movie/NOPE/file?field_name=image", "x", name: "x.png")
            #expect(noObject.status == 404 && noObject.json["code"] as? Int == 1000, "\(noObject.text)")
            #expect(try await files.send(.GET, "Movie?sub=true").text.components(separatedBy: "\"name\"").count == 2)

            // An upload whose update the caller may not make touches no file, not even one
            // already at the path it would take.
            let denied = try await data(
                .PUT, "Movie/permissions/DENY", #"{"permission": "UPDATE", "role": "*"}"#, key: .serverCode)
            #expect(denied.status == 200, "\(denied.text)")
            let refused = try await upload("Movie/\(id)/file?field_name=image", "intruder", name: "minus.png")
            #expect(refused.status == 403, "\(refused.text)")
            #expect(try await data(.GET, "Movie/\(id)/file?field_name=image").text == "second image")
            let allowed = try await data(
                .PUT, "Movie/permissions/GRANT", #"{"permission": "UPDATE", "role": "*"}"#, key: .serverCode)
            #expect(allowed.status == 200, "\(allowed.text)")

            let deleted = try await data(.DELETE, "Movie/\(id)/file?field_name=image")
            #expect(deleted.status == 200 && deleted.json["image"] is NSNull, "\(deleted.text)")
            #expect(try await files.send(.GET, "Movie/\(id)/image/minus.png").json["code"] as? Int == 6000)
            let gone = try await data(.GET, "Movie/\(id)/file?field_name=image")
            #expect(gone.status == 404 && gone.json["code"] as? Int == 6000, "\(gone.text)")
        }
    }
}
