import AsyncHTTPClient
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
import StreamTestSupport
import TestSupport
import Testing

/// The file API through the gateway (contract §4): uploads, downloads with their validators
/// and ranges, listings, counts, directories, deletion, and the error codes each refusal carries.
@Suite(.timeLimit(.minutes(20))) struct FileRoutesTests {
    @Test(arguments: StorageBackend.allCases) func anUploadDownloadsByteForByteWithItsURL(_ backend: StorageBackend)
        async throws
    {
        try await FileCluster.with(backend) { files async throws in
            let bytes = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let uploaded = try await files.upload("docs/report%20v1.pdf", bytes)
            #expect(uploaded.status == 200, "\(uploaded.text)")
            let url = FileCluster.publicURL + files.cluster.prefix() + "/files/docs/report%20v1.pdf"
            #expect(uploaded.json["fileURL"] as? String == url)
            let download = try await files.send(.GET, "docs/report%20v1.pdf")
            #expect(download.status == 200)
            #expect(Array(download.body) == bytes)
            #expect(download.headers["content-type"].first == "application/pdf")
            #expect(download.headers["content-length"].first == "100000")
            #expect(download.headers["accept-ranges"].first == "bytes")
            #expect(download.headers["etag"].first?.hasPrefix("\"") == true)
            #expect(download.headers["last-modified"].first?.hasSuffix(" GMT") == true)
            // The same bytes under /api/files with the credentials in headers.
            let api = try await HTTPTestClient.send(
                .GET, files.cluster.gatewayURL + "/api/files/docs/report%20v1.pdf",
                headers: [("application-id", files.cluster.app.id), ("secret-key", files.cluster.app.keys[.rest]!)])
            #expect(api.status == 200 && Array(api.body) == bytes, "\(api.status) \(api.text.prefix(200))")
            let attachment = try await files.send(.GET, "docs/report%20v1.pdf?download=true")
            #expect(
                attachment.headers["content-disposition"].first
                    == "attachment; filename=\"report v1.pdf\"; filename*=UTF-8''report%20v1.pdf")
        }
    }

    @Test(arguments: StorageBackend.allCases) func overwriteIsRefusedUnlessAskedAndReplacesWhole(
        _ backend: StorageBackend
    ) async throws {
        try await FileCluster.with(backend) { files async throws in
            #expect(try await files.upload("a.txt", Array("first".utf8)).status == 200)
            let refused = try await files.upload("a.txt", Array("second".utf8))
            #expect(refused.status == 409 && refused.json["code"] as? Int == 6003, "\(refused.text)")
            #expect(try await files.send(.GET, "a.txt").text == "first")
            #expect(try await files.upload("a.txt", Array("second!".utf8), query: "?overwrite=true").status == 200)
            #expect(try await files.send(.GET, "a.txt").text == "second!")
            // The replaced bytes are garbage once their (test: zero) grace passes, not before.
            #expect(try await files.storedFiles().count == 2)
        }
    }

    @Test(arguments: StorageBackend.allCases) func rangesAndConditionalRequestsAreByteExact(_ backend: StorageBackend)
        async throws
    {
        try await FileCluster.with(backend) { files async throws in
            let bytes = (0..<1000).map { UInt8($0 % 251) }
            #expect(try await files.upload("r.bin", bytes).status == 200)
            let whole = try await files.send(.GET, "r.bin")
            let etag = whole.headers["etag"].first!
            let lastModified = whole.headers["last-modified"].first!
            let cases: [(String, Int, ArraySlice<UInt8>, String?)] = [
                ("bytes=0-99", 206, bytes[0..<100], "bytes 0-99/1000"),
                ("bytes=990-", 206, bytes[990..<1000], "bytes 990-999/1000"),
                ("bytes=-5", 206, bytes[995..<1000], "bytes 995-999/1000"),
                ("bytes=500-5000", 206, bytes[500..<1000], "bytes 500-999/1000"),
                ("bytes=0-1,4-5", 200, bytes[...], nil),
            ]
            for (range, status, expected, contentRange) in cases {
                let answer = try await files.send(.GET, "r.bin", headers: [("Range", range)])
                #expect(answer.status == status, "\(range)")
                #expect(Array(answer.body) == Array(expected), "\(range)")
                #expect(answer.headers["content-range"].first == contentRange, "\(range)")
                #expect(answer.headers["content-length"].first == "\(expected.count)", "\(range)")
            }
            let past = try await files.send(.GET, "r.bin", headers: [("Range", "bytes=1000-")])
            #expect(past.status == 416 && past.body.isEmpty && past.headers["content-range"].first == "bytes */1000")
            let notModified = try await files.send(.GET, "r.bin", headers: [("If-None-Match", etag)])
            #expect(notModified.status == 304 && notModified.body.isEmpty && notModified.headers["etag"].first == etag)
            #expect(
                try await files.send(.GET, "r.bin", headers: [("If-None-Match", "\"other\", \(etag)")]).status == 304)
            #expect(try await files.send(.GET, "r.bin", headers: [("If-None-Match", "\"other\"")]).status == 200)
            #expect(try await files.send(.GET, "r.bin", headers: [("If-Modified-Since", lastModified)]).status == 304)
            let stale = try await files.send(.GET, "r.bin", headers: [("Range", "bytes=0-9"), ("If-Range", "\"old\"")])
            #expect(stale.status == 200 && stale.body.count == 1000)
            let current = try await files.send(.GET, "r.bin", headers: [("Range", "bytes=0-9"), ("If-Range", etag)])
            #expect(current.status == 206 && current.body.count == 10)
            // A stale If-Range means the whole file even when the range lies past its end.
            let staleBeyond = try await files.send(
                .GET, "r.bin", headers: [("Range", "bytes=5000-"), ("If-Range", "\"old\"")])
            #expect(staleBeyond.status == 200 && staleBeyond.body.count == 1000)
            #expect(whole.headers["x-content-type-options"].first == "nosniff")
        }
    }

    @Test(arguments: StorageBackend.stores) func listingsCountsAndExistence(_ backend: StorageBackend) async throws {
        try await FileCluster.with(backend) { files async throws in
            for path in ["web/index.html", "web/about.html", "web/app.js", "web/img/logo.png", "web/img/icon.png"] {
                #expect(try await files.upload(path, Array(path.utf8)).status == 200)
            }
            #expect(try await files.send(.POST, "web/empty/").status == 200)
            let listing = try await files.send(.GET, "web")
            let entries = try #require(try JSONSerialization.jsonObject(with: listing.body) as? [[String: Any]])
            #expect(entries.map { $0["name"] as? String } == ["about.html", "app.js", "empty", "img", "index.html"])
            let index = try #require(entries.last)
            #expect(Set(index.keys) == ["name", "createdOn", "publicUrl", "url", "size"])
            #expect(index["url"] as? String == "web/index.html")
            #expect(
                index["publicUrl"] as? String == FileCluster.publicURL + files.cluster.prefix()
                    + "/files/web/index.html")
            #expect(index["size"] as? Int == "web/index.html".utf8.count)
            #expect((index["createdOn"] as? Int ?? 0) > 1_700_000_000_000)
            let html = try await files.send(.GET, "web?pattern=*.html")
            #expect(try names(html) == ["about.html", "index.html"])
            let deep = try await files.send(.GET, "web?pattern=*.png&sub=true")
            #expect(try names(deep) == ["icon.png", "logo.png"])
            let page = try await files.send(.GET, "web?pagesize=2&offset=1")
            #expect(try names(page) == ["app.js", "empty"])
            #expect(try await files.send(.GET, "web?action=count").text == "3")
            #expect(try await files.send(.GET, "web?action=count&countDirectories=true").text == "5")
            #expect(try await files.send(.GET, "web?action=count&sub=true&pattern=*.png").text == "2")
            #expect(try await files.send(.GET, "web/?action=count&sub=true&countDirectories=true").text == "7")
            #expect(try await files.send(.GET, "web/img?action=exists").text == "true")
            #expect(try await files.send(.GET, "web/empty?action=exists").text == "true")
            #expect(try await files.send(.GET, "web/app.js?action=exists").text == "true")
            #expect(try await files.send(.GET, "nothing?action=exists").text == "false")
            let root = try await files.send(.GET, "")
            #expect(try names(root) == ["web"], "\(root.text)")
        }
    }

    @Test(arguments: StorageBackend.stores) func deletingAFileOrADirectoryWithEverythingInIt(_ backend: StorageBackend)
        async throws
    {
        try await FileCluster.with(backend) { files async throws in
            for path in ["a/b/c.txt", "a/b/d.txt", "a/e.txt", "a-b.txt", "a0.txt"] {
                #expect(try await files.upload(path, Array(path.utf8)).status == 200)
            }
            #expect(try await files.send(.DELETE, "a/e.txt").status == 200)
            #expect(try await files.send(.GET, "a/e.txt").json["code"] as? Int == 6000)
            #expect(try await files.send(.DELETE, "a").status == 200)
            #expect(try await files.send(.GET, "a/b/c.txt?action=exists").text == "false")
            // Neighbours whose names sort next to the directory's contents stay.
            #expect(try names(try await files.send(.GET, "")) == ["a-b.txt", "a0.txt"])
            let missing = try await files.send(.DELETE, "a")
            #expect(missing.status == 404 && missing.json["code"] as? Int == 6000)
        }
    }

    @Test(arguments: StorageBackend.allCases) func base64SavesAndTheirLimit(_ backend: StorageBackend) async throws {
        try await FileCluster.with(backend) { files async throws in
            let bytes = Data((0..<3000).map { UInt8($0 % 256) })
            let saved = try await files.send(
                .PUT, "binary/b/data.bin", headers: [("Content-Type", "text/plain")],
                body: Data(bytes.base64EncodedString().utf8))
            #expect(saved.status == 200, "\(saved.text)")
            #expect(saved.text == "\"" + FileCluster.publicURL + files.cluster.prefix() + "/files/b/data.bin\"")
            #expect(try await files.send(.GET, "b/data.bin").body == bytes)
            let again = try await files.send(.PUT, "binary/b/data.bin", body: Data(bytes.base64EncodedString().utf8))
            #expect(again.json["code"] as? Int == 6003)
            let large = Data(repeating: UInt8(ascii: "A"), count: 2_800_004)
            let refused = try await files.send(.PUT, "binary/b/large.bin?overwrite=true", body: large)
            #expect(refused.status == 400 && refused.json["code"] as? Int == 6016, "\(refused.text.prefix(200))")
            let garbage = try await files.send(.PUT, "binary/b/bad.bin", body: Data("not base64!".utf8))
            #expect(garbage.status == 400)
            #expect(try await files.send(.GET, "b/bad.bin?action=exists").text == "false")
        }
    }

    @Test(arguments: StorageBackend.stores) func refusalsCarryTheContractsCodes(_ backend: StorageBackend) async throws
    {
        try await FileCluster.with(backend) { files async throws in
            #expect(try await files.upload("f.txt", Array("x".utf8)).status == 200)
            let cases: [(HTTPMethod, String, [(String, String)], Data?, Int, Int)] = [
                (.GET, "missing.txt", [], nil, 404, 6000),
                (.GET, "missing/?action=count", [], nil, 404, 6000),
                (.DELETE, "missing.txt", [], nil, 404, 6000),
                (.POST, "f.txt/", [], nil, 409, 6003),
                // The root takes no upload and is never deleted: no route serves those methods there.
                (.POST, "", [], nil, 404, 404),
                (.DELETE, "", [], nil, 404, 404),
                (
                    .POST, "x.txt", [("Content-Type", "multipart/form-data; boundary=b")],
                    Data("--b\r\nContent-Disposition: form-data; name=\"other\"\r\n\r\nv\r\n--b--\r\n".utf8), 400, 8010
                ),
                (
                    .POST, "dir/", [("Content-Type", MultipartForm(file: []).contentType)],
                    Data(MultipartForm(file: [1]).body), 400, 6028
                ),
                (.GET, "f.txt?action=bogus", [], nil, 400, 400),
                (.GET, "?pagesize=0", [], nil, 400, 400),
                (.GET, "?sub=maybe", [], nil, 400, 400),
                (.PUT, "somewhere/else", [], Data("x".utf8), 404, 404),
                (.GET, "..%2f..%2fetc%2fpasswd", [], nil, 400, 6006),
            ]
            for (method, path, headers, body, status, code) in cases {
                let answer = try await files.send(method, path, headers: headers, body: body)
                #expect(
                    answer.status == status && answer.json["code"] as? Int == code,
                    "\(method) \(path): \(answer.status) \(answer.text)")
            }
            #expect(try await files.upload("f.txt/inner.txt", [1]).json["code"] as? Int == 6003)
        }
    }

    func names(_ result: HTTPResult) throws -> [String] {
        let entries = try #require(try JSONSerialization.jsonObject(with: result.body) as? [[String: Any]])
        return entries.compactMap { $0["name"] as? String }
    }
}
