import Foundation
import InternalProtocol
import NIOHTTP1
import Permissions
import PropertyBased
import TestSupport
import Testing

@testable import FilesService

/// File permissions: directories are containers whose cells reach everything below them (a cell
/// set deeper overriding the same cell higher up), files are assets with their own cells, and
/// the nine layers decide. Checked against a model that walks the tree cell by cell, and through
/// the API with the REST and server-code keys.
@Suite(.timeLimit(.minutes(20))) struct FilePermissionTests {
    static let paths = ["", "a", "a/b", "a/b/f.txt", "a/g.txt", "c", "c/h.txt"]
    static let directories: Set<String> = ["", "a", "a/b", "c"]
    static let principals: [Principal] = [
        .user("u1"), .user("u2"), .user("*"), .role("R1"), .role("R2"), .role("AuthenticatedUser"),
        .role("NotAuthenticatedUser"), .role("*"),
    ]

    struct Cell: Sendable, CustomStringConvertible {
        let path: String, principal: Principal, operation: FileOperation, decision: PermissionDecision
        var description: String { "\(decision.rawValue) \(operation.rawValue) \(principal) on /\(path)" }
    }

    static let cell = zip(
        Gen.int(in: 0...(paths.count - 1)), Gen.int(in: 0...(principals.count - 1)), Gen.int(in: 0...2), Gen.bool
    ).map { path, principal, operation, grant in
        Cell(
            path: paths[path], principal: principals[principal], operation: FileOperation.allCases[operation],
            decision: grant ? .grant : .deny)
    }

    /// The model: each container cell is looked up by walking from the entry's container up to
    /// the root; the file's own cells are its ACL; then the oracle's nine layers.
    static func model(
        _ cells: [Cell], caller: PermissionCaller, _ operation: FileOperation, path: String, owner: String?
    ) -> Bool {
        let isDirectory = directories.contains(path)
        var chain: [String] = isDirectory ? [path] : []
        var cursor = path
        while !cursor.isEmpty {
            cursor = cursor.contains("/") ? String(cursor[..<cursor.lastIndex(of: "/")!]) : ""
            chain.append(cursor)
        }
        var container = PermissionMatrix<FileOperation>()
        for principal in principals {
            for candidate in FileOperation.allCases {
                // The deepest directory with this cell decides it; the last write of a cell wins.
                if let found = chain.lazy.compactMap({ directory in
                    cells.last { $0.path == directory && $0.principal == principal && $0.operation == candidate }
                }).first {
                    container.set(principal, candidate, found.decision)
                }
            }
        }
        var acl = PermissionMatrix<FileOperation>()
        if !isDirectory {
            for cell in cells where cell.path == path { acl.set(cell.principal, cell.operation, cell.decision) }
        }
        var rules = ContainerPermissions<FileOperation>()
        rules.containers["x"] = container
        return PermissionOracle.allows(caller, operation, container: "x", ownerID: owner, acl: acl, rules: rules)
    }

    @Test func decisionsEqualTheModel() async {
        let callers = zip(Gen.int(in: 0...2), Gen.bool, Gen.bool)
        await propertyCheck(count: 300, input: Self.cell.array(of: 0...12), callers) { cells, caller in
            let (user, r1, r2) = caller
            let userID = [nil, "u1", "u2"][user]
            let identity = PermissionCaller(
                userID: userID, customRoles: (r1 ? ["R1"] : []) + (r2 ? ["R2"] : []),
                systemRoles: [userID == nil ? "NotAuthenticatedUser" : "AuthenticatedUser", "RestUser"])
            var rules = FileRules()
            for cell in cells {
                rules.cells[try! FilePath(decoded: cell.path), default: PermissionMatrix()].set(
                    cell.principal, cell.operation, cell.decision)
            }
            for path in Self.paths {
                for operation in FileOperation.allCases {
                    let expected = Self.model(cells, caller: identity, operation, path: path, owner: "u1")
                    let actual = rules.allows(
                        identity, operation, path: try! FilePath(decoded: path),
                        isDirectory: Self.directories.contains(path),
                        ownerID: "u1")
                    #expect(actual == expected, "\(operation) /\(path)")
                }
            }
        }
    }

    @Test func cellsSetThroughTheAPIDecideReadsWritesDeletesAndListings() async throws {
        try await FileCluster.with { files async throws in
            func send(_ method: HTTPMethod, _ path: String, _ body: String? = nil, key: APIKeyKind = .rest) async throws
                -> HTTPResult
            {
                try await files.cluster.send(method, "/files/" + path, body, key: key)
            }
            for path in ["private/a.txt", "private/open.txt", "public/b.txt", "ro/c.txt"] {
                #expect(try await files.upload(path, Array(path.utf8)).status == 200)
            }
            // Where the app denies PERMISSION, only the server-code key (or an owner) changes cells.
            let locked = try await send(
                .PUT, "permissions/DENY/private", #"{"permission": "PERMISSION", "role": "*"}"#, key: .serverCode)
            #expect(locked.status == 200, "\(locked.text)")
            let refused = try await send(
                .PUT, "permissions/DENY/private", #"{"permission": "READ", "role": "RestUser"}"#)
            #expect(refused.status == 403 && refused.json["code"] as? Int == 4000, "\(refused.text)")
            for (path, body) in [
                ("permissions/DENY/private", #"{"permission": "READ", "role": "RestUser"}"#),
                ("permissions/GRANT/%2Fprivate%2Fopen.txt", #"{"permission": "READ", "role": "RestUser"}"#),
                ("permissions/DENY/ro", #"{"permission": "WRITE", "user": "*"}"#),
                ("permissions/DENY/ro/c.txt", #"{"permission": "DELETE", "role": "RestUser"}"#),
            ] {
                let answer = try await send(.PUT, path, body, key: .serverCode)
                #expect(answer.status == 200 && answer.text == "null", "\(path): \(answer.text)")
            }
            #expect(try await send(.GET, "private/a.txt").json["code"] as? Int == 4000)
            #expect(try await send(.GET, "private/open.txt").text == "private/open.txt")
            #expect(try await send(.GET, "private/a.txt", key: .serverCode).text == "private/a.txt")
            #expect(try await send(.GET, "private").json["code"] as? Int == 4000)
            // Listings and counts show only what the caller may read.
            let root = try await send(.GET, "")
            #expect(root.text.contains("public") && !root.text.contains("private"), "\(root.text)")
            #expect(try await send(.GET, "?action=count&countDirectories=true").text == "2")
            #expect(try await send(.GET, "?action=count&countDirectories=true", key: .serverCode).text == "3")
            let deep = try await send(.GET, "?sub=true")
            #expect(
                deep.text.contains("open.txt") && !deep.text.contains("a.txt") && deep.text.contains("b.txt"),
                "\(deep.text)")
            // WRITE denied to every user, even the server-code key; DELETE denied to the REST key.
            #expect(try await files.upload("ro/new.txt", [1]).json["code"] as? Int == 4000)
            #expect(try await send(.POST, "ro/sub/").json["code"] as? Int == 4000)
            #expect(try await send(.DELETE, "ro/c.txt").json["code"] as? Int == 4000)
            #expect(try await send(.DELETE, "ro/c.txt", key: .serverCode).status == 200)
            #expect(try await send(.GET, "ro?action=count", key: .serverCode).text == "0")
            // Moving a file takes DELETE where it was and WRITE where it goes.
            let move = try await send(.PUT, "move", #"{"sourcePath": "/public/b.txt", "targetPath": "/ro"}"#)
            #expect(move.json["code"] as? Int == 4000, "\(move.text)")
            // A file's own DENY holds when its directory is copied, deleted or moved.
            #expect(try await files.upload("public/secret.txt", Array("s".utf8)).status == 200)
            for (path, body) in [
                ("permissions/DENY/public/secret.txt", #"{"permission": "READ", "role": "RestUser"}"#),
                ("permissions/DENY/public/secret.txt", #"{"permission": "DELETE", "role": "RestUser"}"#),
            ] {
                #expect(try await send(.PUT, path, body, key: .serverCode).status == 200)
            }
            let copy = try await send(.PUT, "copy", #"{"sourcePath": "/public", "targetPath": "/mine"}"#)
            #expect(copy.json["code"] as? Int == 4000, "\(copy.text)")
            #expect(try await send(.GET, "mine?action=exists", key: .serverCode).text == "false")
            #expect(try await send(.DELETE, "public").json["code"] as? Int == 4000)
            let rename = try await send(.PUT, "rename", #"{"oldPathName": "/public", "newName": "p2"}"#)
            #expect(rename.json["code"] as? Int == 4000)
            #expect(try await send(.GET, "public/secret.txt", key: .serverCode).text == "s")
            let bad = try await send(
                .PUT, "permissions/DENY/public", #"{"permission": "FLY", "role": "RestUser"}"#, key: .serverCode)
            #expect(bad.json["code"] as? Int == 6028)
            let missing = try await send(
                .PUT, "permissions/DENY/nothing", #"{"permission": "READ", "user": "*"}"#, key: .serverCode)
            #expect(missing.json["code"] as? Int == 6000)
        }
    }

    /// The JS SDK's `files-permissions.js`: with the JS key and no user, READ, WRITE and DELETE
    /// are granted and denied on a file for a user, a role, every user and every role — as
    /// Backendless allows by default. An app that denies PERMISSION stops such callers (4000),
    /// while the file's owner and the server-code key still may.
    @Test func clientsChangeFilePermissionsUnlessTheAppDeniesIt() async throws {
        try await FileCluster.with { files async throws in
            let cluster = files.cluster
            let user = try await cluster.account("john@lennon.co")
            let created = try await files.upload("permissions-test.txt", [])
            #expect(created.status == 200, "\(created.text)")
            let targets = [
                #""user": "\#(user.id)""#, #""role": "AuthenticatedUser""#, #""user": "*""#, #""role": "*""#,
            ]
            for decision in ["GRANT", "DENY"] {
                for permission in ["READ", "WRITE", "DELETE"] {
                    for target in targets {
                        let body = #"{"permission": "\#(permission)", \#(target)}"#
                        let answer = try await cluster.send(
                            .PUT, "/files/permissions/\(decision)/permissions-test.txt", body, key: .js)
                        #expect(answer.status == 200 && answer.text == "null", "\(decision) \(body): \(answer.text)")
                    }
                }
            }

            let form = MultipartForm(file: Array("mine".utf8), name: "mine.txt")
            let owned = try await HTTPTestClient.send(
                .POST, files.base + "/files/owned/mine.txt",
                headers: [("Content-Type", form.contentType), ("user-token", user.token)], body: Data(form.body))
            #expect(owned.status == 200, "\(owned.text)")
            let lockdown = try await cluster.send(
                .PUT, "/files/permissions/DENY/owned", #"{"permission": "PERMISSION", "role": "*"}"#, key: .serverCode)
            #expect(lockdown.status == 200, "\(lockdown.text)")
            let change = #"{"permission": "READ", "user": "*"}"#
            let stranger = try await cluster.send(.PUT, "/files/permissions/DENY/owned/mine.txt", change, key: .js)
            #expect(stranger.status == 403 && stranger.json["code"] as? Int == 4000, "\(stranger.text)")
            let owner = try await cluster.send(
                .PUT, "/files/permissions/DENY/owned/mine.txt", change, token: user.token, key: .js)
            #expect(owner.status == 200, "the owner still may: \(owner.text)")
            let server = try await cluster.send(
                .PUT, "/files/permissions/GRANT/owned/mine.txt", change, key: .serverCode)
            #expect(server.status == 200, "\(server.text)")
        }
    }
}
