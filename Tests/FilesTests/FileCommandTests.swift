import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Copy, move, rename and the three append forms (contract §4), with their refusals.
@Suite(.timeLimit(.minutes(20))) struct FileCommandTests {
    func url(_ files: FileCluster, _ path: String) -> String {
        "\"" + FileCluster.publicURL + files.cluster.prefix() + "/files/" + path + "\""
    }

    func json(_: String) -> [(String, String)] { [("Content-Type", "application/json")] }

    @Test(arguments: StorageBackend.allCases) func copyMoveAndRenameFilesAndDirectories(_ backend: StorageBackend)
        async throws
    {
        try await FileCluster.with(backend) { files async throws in
            for path in ["src/a.txt", "src/sub/b.txt"] {
                #expect(try await files.upload(path, Array(path.utf8)).status == 200)
            }
            let headers = [("Content-Type", "application/json")]
            // A file copied into a directory that does not exist yet.
            let copied = try await files.send(
                .PUT, "copy", headers: headers,
                body: Data(#"{"sourcePath": "/src/a.txt", "targetPath": "/backup"}"#.utf8))
            #expect(copied.text == url(files, "backup/a.txt"), "\(copied.text)")
            #expect(try await files.send(.GET, "backup/a.txt").text == "src/a.txt")
            // A directory copied with everything in it; its bytes are copies, not shared.
            let tree = try await files.send(
                .PUT, "copy", headers: headers, body: Data(#"{"sourcePath": "/src", "targetPath": "/"}"#.utf8))
            #expect(tree.json["code"] as? Int == 6018, "copying onto itself: \(tree.text)")
            let copy = try await files.send(
                .PUT, "copy", headers: headers, body: Data(#"{"sourcePath": "/src", "targetPath": "/copies"}"#.utf8))
            #expect(copy.text == url(files, "copies/src"))
            #expect(try await files.send(.GET, "copies/src/sub/b.txt").text == "src/sub/b.txt")
            #expect(try await files.send(.DELETE, "src/sub").status == 200)
            #expect(try await files.send(.GET, "copies/src/sub/b.txt").text == "src/sub/b.txt")
            // Move a directory, then rename a file inside it.
            let moved = try await files.send(
                .PUT, "move", headers: headers,
                body: Data(#"{"sourcePath": "/copies/src", "targetPath": "/archive/2026"}"#.utf8))
            #expect(moved.text == url(files, "archive/2026/src"), "\(moved.text)")
            #expect(try await files.send(.GET, "copies/src?action=exists").text == "false")
            #expect(try await files.send(.GET, "archive/2026/src/sub/b.txt").text == "src/sub/b.txt")
            let renamed = try await files.send(
                .PUT, "rename", headers: headers,
                body: Data(#"{"oldPathName": "/archive/2026/src/a.txt", "newName": "first.txt"}"#.utf8))
            #expect(renamed.text == url(files, "archive/2026/src/first.txt"))
            let listing = try await files.send(.GET, "archive/2026/src")
            #expect(listing.text.contains(#""url":"archive/2026/src/first.txt""#), "\(listing.text)")
            #expect(try await files.send(.GET, "archive/2026/src/first.txt").text == "src/a.txt")
            // Renaming a directory carries what it holds.
            _ = try await files.send(
                .PUT, "rename", headers: headers,
                body: Data(#"{"oldPathName": "/archive/2026", "newName": "old"}"#.utf8))
            #expect(try await files.send(.GET, "archive/old/src/sub/b.txt").text == "src/sub/b.txt")
            #expect(try await files.send(.GET, "archive/old/src/sub?action=count").text == "1")
        }
    }

    @Test(arguments: StorageBackend.stores) func commandRefusals(_ backend: StorageBackend) async throws {
        try await FileCluster.with(backend) { files async throws in
            #expect(try await files.upload("d/a.txt", [1]).status == 200)
            #expect(try await files.upload("d/b.txt", [2]).status == 200)
            let cases: [(String, String, Int)] = [
                ("copy", #"{"sourcePath": "/nothing.txt", "targetPath": "/d"}"#, 6007),
                ("move", #"{"sourcePath": "/nothing.txt", "targetPath": "/d"}"#, 6007),
                ("rename", #"{"oldPathName": "/nothing.txt", "newName": "x.txt"}"#, 6007),
                ("rename", #"{"oldPathName": "/d/a.txt", "newName": "b.txt"}"#, 6018),
                ("move", #"{"sourcePath": "/d/a.txt", "targetPath": "/d"}"#, 6018),
                ("copy", #"{"sourcePath": "/d/a.txt", "targetPath": "/d"}"#, 6018),
                ("move", #"{"sourcePath": "/d", "targetPath": "/d/inner"}"#, 8011),
                ("copy", #"{"targetPath": "/d"}"#, 6028),
                ("rename", #"{"oldPathName": "/d/a.txt"}"#, 6028),
                ("rename", #"{"oldPathName": "/d/a.txt", "newName": "../x"}"#, 6006),
                ("move", #"{"sourcePath": "/d/a.txt", "targetPath": "/../x"}"#, 6006),
                ("copy", "not json", 8011),
            ]
            for (command, body, code) in cases {
                let answer = try await files.send(.PUT, command, headers: json(body), body: Data(body.utf8))
                #expect(answer.json["code"] as? Int == code, "\(command) \(body): \(answer.text)")
                // A destination that exists is the tree's state refusing the command: a conflict.
                if code == 6018 { #expect(answer.status == 409, "\(command) \(body): \(answer.status)") }
            }
            #expect(try await files.send(.GET, "d/a.txt").body == Data([1]))
            #expect(try await files.send(.GET, "d/b.txt").body == Data([2]))
        }
    }

    @Test(arguments: StorageBackend.allCases) func theThreeAppendFormsAddToTheEnd(_ backend: StorageBackend)
        async throws
    {
        try await FileCluster.with(backend) { files async throws in
            // Appending to a missing file creates it.
            let first = try await files.send(
                .PUT, "append/log/app.log", headers: [("Content-Type", "text/plain")], body: Data("one\n".utf8))
            #expect(first.status == 200 && first.text == url(files, "log/app.log"), "\(first.text)")
            let second = try await files.send(
                .PUT, "append/log/app.log", headers: [("Content-Type", "text/plain")], body: Data("two\n".utf8))
            #expect(second.text == first.text)
            let binary = try await files.send(
                .PUT, "append/binary/log/app.log", headers: [("Content-Type", "text/plain")],
                body: Data(Data("three\n".utf8).base64EncodedString().utf8))
            #expect(binary.status == 200, "\(binary.text)")
            let form = MultipartForm(file: Array("four\n".utf8))
            let multipart = try await files.send(
                .POST, "append/log/app.log", headers: [("Content-Type", form.contentType)], body: Data(form.body))
            #expect(
                multipart.json["fileURL"] as? String == FileCluster.publicURL + files.cluster.prefix()
                    + "/files/log/app.log")
            #expect(try await files.send(.GET, "log/app.log").text == "one\ntwo\nthree\nfour\n")
            let refused = try await files.send(
                .PUT, "append/log", headers: [("Content-Type", "text/plain")], body: Data("x".utf8))
            #expect(refused.json["code"] as? Int == 6003, "appending to a directory: \(refused.text)")
            // Only the current object stays once the replaced ones are collected.
            #expect(try await files.send(.GET, "log?action=count").text == "1")
        }
    }

    /// Appends racing a rename and a delete never leave a row naming an object handed to the
    /// garbage collector (the renamed file would lose its bytes).
    @Test func appendsRacingRenamesKeepEveryFilesObject() async throws {
        try await FileCluster.with { files async throws in
            for round in 0..<3 {
                #expect(try await files.upload("log\(round).txt", Array("start\n".utf8)).status == 200)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for line in 0..<8 {
                        group.addTask {
                            _ = try await files.send(
                                .PUT, "append/log\(round).txt", headers: [("Content-Type", "text/plain")],
                                body: Data("\(line)\n".utf8))
                        }
                    }
                    group.addTask {
                        _ = try await files.send(
                            .PUT, "rename", headers: [("Content-Type", "application/json")],
                            body: Data(#"{"oldPathName": "/log\#(round).txt", "newName": "old\#(round).txt"}"#.utf8))
                    }
                    try await group.waitForAll()
                }
                #expect(try await files.danglingRows() == 0, "round \(round)")
                let old = try await files.send(.GET, "old\(round).txt")
                #expect(old.status == 200 && old.text.hasPrefix("start\n"), "\(old.text)")
            }
        }
    }

    @Test(arguments: StorageBackend.stores) func concurrentAppendsLoseNothing(_ backend: StorageBackend) async throws {
        try await FileCluster.with(backend) { files async throws in
            let writers = 12
            try await withThrowingTaskGroup(of: Int.self) { group in
                for writer in 0..<writers {
                    group.addTask {
                        let line = String(format: "%02d\n", writer)
                        return try await files.send(
                            .PUT, "append/c.txt", headers: [("Content-Type", "text/plain")], body: Data(line.utf8)
                        ).status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            let lines = try await files.send(.GET, "c.txt").text.split(separator: "\n")
            #expect(lines.count == writers)
            #expect(Set(lines) == Set((0..<writers).map { Substring(String(format: "%02d", $0)) }))
        }
    }
}
