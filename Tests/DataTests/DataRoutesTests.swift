import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// The public `/data` contract through the gateway: each SDK generation's variant.
@Suite(.timeLimit(.minutes(20))) struct DataRoutesTests {
    struct Client: Sendable {
        let cluster: TestCluster
        var kind: APIKeyKind = .rest

        func send(_ method: HTTPMethod, _ path: String, _ body: String? = nil) async throws -> HTTPResult {
            try await HTTPTestClient.send(
                method, cluster.gatewayURL + cluster.prefix(kind) + path,
                headers: body == nil ? [] : [("Content-Type", "application/json")], body: body.map { Data($0.utf8) })
        }

        func array(_ result: HTTPResult) throws -> [[String: Any]] {
            try #require(try JSONSerialization.jsonObject(with: result.body) as? [[String: Any]], "\(result.text)")
        }
    }

    @Test func everyCreateFindCountAndDeleteVariant() async throws {
        try await TestCluster.shared { cluster async throws in
            let client = Client(cluster: cluster)
            let posted = try await client.send(.POST, "/data/Person", #"{"name": "Ann", "age": 31}"#)
            #expect(posted.status == 200, "\(posted.text)")
            let put = try await client.send(.PUT, "/data/Person", #"{"name": "Bob", "age": 25}"#)
            #expect(put.status == 200)
            let bobId = try #require(put.json["objectId"] as? String)
            let updated = try await client.send(.PUT, "/data/Person/\(bobId)", #"{"age": 26}"#)
            #expect(updated.json["age"] as? Int == 26 && updated.json["name"] as? String == "Bob")
            let savedWithId = try await client.send(.PUT, "/data/Person", #"{"objectId": "\#(bobId)", "age": 27}"#)
            #expect(savedWithId.json["age"] as? Int == 27)

            let getFind = try client.array(try await client.send(.GET, "/data/Person?where=age%20%3E%2030&props=name"))
            #expect(getFind.map { $0["name"] as? String } == ["Ann"])
            let postFind = try client.array(
                try await client.send(
                    .POST, "/data/Person/find", #"{"where": "age > 30", "props": ["name"], "pageSize": "10"}"#))
            #expect(postFind.map { $0["name"] as? String } == ["Ann"])
            let repeated = try client.array(
                try await client.send(.GET, "/data/Person?property=name&property=age&sortBy=age%20desc"))
            #expect(repeated.map { $0["name"] as? String } == ["Ann", "Bob"])

            let first = try await client.send(.GET, "/data/Person/first")
            #expect(first.json["name"] as? String == "Ann")
            let last = try await client.send(.GET, "/data/Person/last")
            #expect(last.json["name"] as? String == "Bob")
            let firstByFind = try client.array(
                try await client.send(
                    .POST, "/data/Person/find", #"{"pageSize": 1, "offset": 0, "sortBy": "created desc"}"#))
            #expect(firstByFind.map { $0["name"] as? String } == ["Bob"])
            let byId = try await client.send(.GET, "/data/Person/\(bobId)?props=name")
            #expect(byId.json["name"] as? String == "Bob" && byId.json["age"] == nil)
            let byPk = try await client.send(.GET, "/data/Person/pk?objectId=\(bobId)")
            #expect(byPk.json["objectId"] as? String == bobId)

            #expect(try await client.send(.GET, "/data/Person/count").text == "2")
            #expect(try await client.send(.GET, "/data/Person/count?where=age%3E30").text == "1")
            #expect(try await client.send(.POST, "/data/Person/count", #"{"where": "age > 30"}"#).text == "1")

            let properties = try client.array(try await client.send(.GET, "/data/Person/properties"))
            #expect(properties.first { $0["name"] as? String == "objectId" }?["isPrimaryKey"] as? Bool == true)

            let deleted = try await client.send(.DELETE, "/data/Person/\(bobId)")
            #expect(deleted.json["deletionTime"] is Int)
            let missing = try await client.send(.GET, "/data/Person/\(bobId)")
            #expect(missing.status == 404 && missing.json["code"] as? Int == 1000)
            #expect(missing.json["message"] as? String == "Entity with ID \(bobId) not found")
            let noTable = try await client.send(.GET, "/data/EmptyTable")
            #expect(noTable.status == 404 && noTable.json["code"] as? Int == 1009)
        }
    }

    @Test func bulkVariantsAndQuickBloxAndBQL() async throws {
        try await TestCluster.shared { cluster async throws in
            let client = Client(cluster: cluster)
            let created = try await client.send(
                .POST, "/data/bulk/Score", #"[{"v": 1}, {"v": 2}, {"v": 3}, {"v": 4}, {"v": 5}]"#)
            let ids = try #require(try JSONSerialization.jsonObject(with: created.body) as? [String])
            #expect(ids.count == 5)
            #expect(
                try await client.send(
                    .PUT, "/data/bulk/Score?where=v%20%3E%203",
                    #"{"v": {"___class": "BackendlessExpression", "value": "v + 10"}}"#
                ).text == "2")
            let quick = try await client.send(.GET, "/data/Score/filter?v%5Bgt%5D=10&sort_desc=v&limit=5")
            let items = try #require(quick.json["items"] as? [[String: Any]], "\(quick.text)")
            #expect(items.map { $0["v"] as? Int } == [15, 14])
            #expect(try await client.send(.GET, "/data/Score/filter?v%5Bin%5D=1,2&count=1").json["count"] as? Int == 2)
            let bql = try await client.send(
                .POST, "/data/Score/bql", #"{"query": "where v < ?", "params": [3], "limit": 1}"#)
            #expect(bql.json["totalCount"] as? Int == 2)
            #expect((bql.json["objects"] as? [[String: Any]])?.count == 1)
            #expect(try await client.send(.DELETE, "/data/bulk/Score?where=v%20%3D%201").text == "1")
            #expect(
                try await client.send(
                    .POST, "/data/bulk/Score/delete", #"{"where": "objectId in ('\#(ids[1])','\#(ids[2])')"}"#
                ).text == "2")
            // A malformed condition is refused, never read as "no condition" (which removes everything).
            for body in [#"{"where": 5}"#, #"{"where": ["v = 1"]}"#, #""v = 1""#, "7"] {
                let refused = try await client.send(.POST, "/data/bulk/Score/delete", body)
                #expect(refused.status == 400 && refused.json["code"] as? Int == 1022, "\(body): \(refused.text)")
            }
            // DELETE reads its body the same way: a typo in it removed every object, and its `where` was
            // ignored (removing every object too).
            for body in [#"{"where": "v = 15""#, "garbage", #"{"where": 5}"#] {
                let refused = try await client.send(.DELETE, "/data/bulk/Score", body)
                #expect(refused.status == 400 && refused.json["code"] as? Int == 1022, "\(body): \(refused.text)")
            }
            #expect(try await client.send(.DELETE, "/data/bulk/Score", #"{"where": "v = 15"}"#).text == "1")
            #expect(try await client.send(.POST, "/data/Score", #"{"objectId": "\#(ids[4])", "v": 15}"#).status == 200)
            let upserts = try await client.send(
                .PUT, "/data/bulkupsert/Score", #"[{"objectId": "\#(ids[3])", "v": 0}]"#)
            #expect(upserts.text == "[\"\(ids[3])\"]")
            #expect(try await client.send(.GET, "/data/Score/count").text == "2")
        }
    }

    @Test func hostileAndMalformedRequestsAreClientErrors() async throws {
        try await TestCluster.shared { cluster async throws in
            let client = Client(cluster: cluster)
            _ = try await client.send(.POST, "/data/Safe", #"{"name": "a"}"#)
            let cases: [(HTTPMethod, String, String?, Int)] = [
                (.POST, "/data/Safe", "{not json", 1022),
                (.POST, "/data/Safe", "[1, 2]", 1022),
                (.POST, "/data/Safe", #"{"a": 1, "a": 2}"#, 1022),
                (.POST, "/data/Safe", #"{"name": "x", "NAME": "y"}"#, 1022),
                (.POST, "/data/Safe", String(repeating: "[", count: 200) + String(repeating: "]", count: 200), 1022),
                (.GET, "/data/Safe?where=name%3D%27a%27%3B%20DROP%20TABLE%20%22Safe%22", nil, 1017),
                (.GET, "/data/Safe?sortBy=name%3B%20DELETE%20FROM%20x", nil, 1017),
                (.GET, "/data/Safe?pageSize=1000", nil, 1016),
                (
                    .POST, "/data/Safe/find",
                    #"{"where": "\#(String(repeating: "name = 'a' OR ", count: 6000))name = 'b'"}"#, 1018
                ),
                (.POST, "/data/Safe/find", #"{"where": "\#(String(repeating: "NOT ", count: 100))name = 'b'"}"#, 1018),
                (.GET, "/data/Safe?loadRelations=friends", nil, 1011),
                (.POST, "/data/Safe%22%3B%20DROP%20TABLE%20x", #"{"a": 1}"#, 1020),
                (.POST, "/data/Safe/properties", #"{"name": "x", "type": "STRING"}"#, 1023),
                (.PUT, "/data/_settings", #"{"dynamicSchema": false}"#, 1023),
            ]
            for (method, path, body, code) in cases {
                let answer = try await client.send(method, path, body)
                #expect(answer.json["code"] as? Int == code, "\(method) \(path): \(answer.text)")
                #expect((400..<500).contains(answer.status), "\(method) \(path)")
            }
            let rows = try client.array(try await client.send(.GET, "/data/Safe"))
            #expect(rows.count == 1 && rows[0]["name"] as? String == "a")
        }
    }

    @Test func schemaManagementWithTheServerCodeKey() async throws {
        try await TestCluster.shared { cluster async throws in
            let admin = Client(cluster: cluster, kind: .serverCode)
            let created = try await admin.send(
                .POST, "/data/Product/schema",
                #"[{"name": "sku", "type": "STRING", "required": true, "unique": true}, {"name": "price", "type": "DOUBLE", "defaultValue": 1.5},"#
                    + #"{"name": "launched", "type": "DATETIME", "indexed": true}, {"name": "spec", "type": "JSON"}, {"name": "serial", "type": "AUTO_INCREMENT"}, {"name": "body", "type": "TEXT"}]"#
            )
            #expect(created.status == 200, "\(created.text)")
            let rest = Client(cluster: cluster)
            let saved = try await rest.send(.POST, "/data/Product", #"{"sku": "A1", "launched": "03/23/2015"}"#)
            #expect(saved.json["price"] as? Double == 1.5, "\(saved.text)")
            #expect(saved.json["launched"] as? Int == 1_427_068_800_000)
            #expect(saved.json["serial"] as? Int == 1)
            #expect(try await rest.send(.POST, "/data/Product", #"{"sku": "A1"}"#).json["code"] as? Int == 1015)
            #expect(try await rest.send(.POST, "/data/Product", #"{"price": 2}"#).json["code"] as? Int == 1014)
            let altered = try await admin.send(
                .PUT, "/data/Product/properties/price", #"{"type": "INT", "name": "cents"}"#)
            #expect(
                altered.json["type"] as? String == "INT" && altered.json["name"] as? String == "cents",
                "\(altered.text)")
            #expect(try await rest.send(.GET, "/data/Product/first").json["cents"] as? Int == 2)
            #expect(try await admin.send(.DELETE, "/data/Product/properties/cents").status == 200)
            let afterDrop = try await rest.send(.GET, "/data/Product/first")
            #expect(afterDrop.status == 200 && afterDrop.json["cents"] == nil)
            #expect(try await admin.send(.DELETE, "/data/Product/properties/objectId").json["code"] as? Int == 1024)
            #expect(try await admin.send(.DELETE, "/data/Product/schema").status == 200)
            #expect(try await rest.send(.GET, "/data/Product").json["code"] as? Int == 1009)
            // One request naming a property twice (schemathesis found it a 500) changes nothing.
            let twice = try await admin.send(
                .POST, "/data/Twice/properties",
                #"[{"name": "_parent_id", "type": "STRING"}, {"name": "_parent_id", "type": "TEXT"}]"#)
            #expect(twice.status == 400 && twice.json["code"] as? Int == 1024, "\(twice.text)")
            #expect(try await rest.send(.GET, "/data/Twice").json["code"] as? Int == 1009)
            let caseOnly = try await admin.send(
                .POST, "/data/Twice/properties",
                #"[{"name": "note", "type": "STRING"}, {"name": "Note", "type": "INT"}]"#)
            #expect(caseOnly.json["code"] as? Int == 1024, "names match ignoring case: \(caseOnly.text)")
        }
    }

    @Test func unitOfWorkEnvelopesThroughTheGateway() async throws {
        try await TestCluster.shared { cluster async throws in
            let client = Client(cluster: cluster)
            let admin = Client(cluster: cluster, kind: .serverCode)
            _ = try await admin.send(.POST, "/data/Order/schema", #"{"name": "total", "type": "INT"}"#)
            _ = try await admin.send(.POST, "/data/Line/schema", #"{"name": "order", "type": "STRING"}"#)
            let work = #"""
                {"isolationLevelEnum": "SERIALIZABLE", "operations": [
                 {"operationType": "CREATE", "table": "Order", "opResultId": "order", "payload": {"total": 10}},
                 {"operationType": "CREATE", "table": "Line", "payload": {"order": {"___ref": true, "opResultId": "order", "propName": "objectId"}}}]}
                """#
            let success = try await client.send(.POST, "/transaction/unit-of-work", work)
            #expect(success.status == 200 && success.json["success"] as? Bool == true, "\(success.text)")
            let results = try #require(success.json["results"] as? [String: Any])
            let order = try #require((results["order"] as? [String: Any])?["result"] as? [String: Any])
            let line = try #require((results["createLine1"] as? [String: Any])?["result"] as? [String: Any])
            #expect(line["order"] as? String == order["objectId"] as? String)

            let failing =
                #"{"operations": [{"operationType": "CREATE", "table": "Order", "payload": {"total": 1}}, {"operationType": "DELETE", "table": "Order", "payload": "missing"}]}"#
            let failure = try await client.send(.POST, "/transaction/unit-of-work", failing)
            #expect(failure.status == 200 && failure.json["success"] as? Bool == false)
            #expect((failure.json["error"] as? [String: Any])?["code"] as? Int == 1000)
            #expect(try await client.send(.GET, "/data/Order/count").text == "1")

            let malformed = try await client.send(.POST, "/transaction/unit-of-work", #"{"operations": "all"}"#)
            #expect(malformed.status == 400 && malformed.json["code"] as? Int == 1022)
        }
    }
}
