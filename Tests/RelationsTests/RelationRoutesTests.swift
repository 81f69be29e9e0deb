import Foundation
import InternalProtocol
import NIOHTTP1
import TestSupport
import Testing

/// The relation API through the gateway, in each SDK generation's variant (§3.4, §8).
@Suite(.timeLimit(.minutes(20))) struct RelationRoutesTests {
    @Test func everySDKVariantOfTheRelationAPI() async throws {
        try await TestCluster.shared { cluster async throws in
            let ids = try await cluster.createNamed("Person", ["Ann", "Bob", "Cy", "Di"])
            let (ann, bob, cy, di) = (ids[0], ids[1], ids[2], ids[3])
            // Set with ids declares the column (the colon raw or percent-encoded).
            #expect(
                try await cluster.send(.POST, "/data/Person/\(ann)/friends:Person:n", #"["\#(bob)", "\#(cy)"]"#).text
                    == "2")
            #expect(
                try await cluster.send(.PUT, "/data/Person/\(ann)/friends%3APerson%3An", #"["\#(di)", "missing"]"#).text
                    == "1")
            // The JS SDK's data-relations.js: a set answers the children it leaves, those linked before too.
            #expect(
                try await cluster.send(.POST, "/data/Person/\(ann)/friends", #"["\#(bob)", "\#(cy)", "\#(di)"]"#).text
                    == "3")
            // By condition: no body, no content type (the JS SDK).
            let added = try await cluster.send(.PUT, "/data/Person/\(bob)/friends?whereClause=name%20%3D%20%27Ann%27")
            #expect(added.text == "1", "\(added.text)")
            let removed = try await cluster.send(
                .DELETE, "/data/Person/\(ann)/friends?whereClause=name%20IN%20(%27Bob%27%2C%27Cy%27)")
            #expect(removed.text == "2")
            #expect(try await cluster.send(.DELETE, "/data/Person/\(ann)/friends", #"["\#(di)"]"#).text == "1")
            #expect(
                try await cluster.send(.POST, "/data/Person/\(ann)/friends", #"["\#(bob)", "\#(cy)", "\#(di)"]"#).text
                    == "3")

            // Loading: GET (query string, `property=` repeated, `where` or `whereClause`) and POST …/load.
            let page = try await cluster.send(.GET, "/data/Person/\(ann)/friends?pageSize=2&offset=1&property=name")
            #expect(try page.names() == ["Cy", "Di"], "\(page.text)")
            #expect(try await cluster.send(.GET, "/data/Person/\(ann)/friends?where=name%3D%27Di%27").names() == ["Di"])
            #expect(
                try await cluster.send(.GET, "/data/Person/\(ann)/friends?whereClause=name%3D%27Cy%27").names() == [
                    "Cy"
                ])
            let sorted = try await cluster.send(
                .GET, "/data/Person/\(ann)/friends?sortBy=name%20desc&props=name,objectId")
            #expect(try sorted.names() == ["Di", "Cy", "Bob"])
            let posted = try await cluster.send(
                .POST, "/data/Person/\(ann)/friends/load",
                #"{"pageSize": 1, "offset": 0, "sortBy": "name", "props": ["name"]}"#)
            #expect(try posted.names() == ["Bob"], "\(posted.text)")
            let properties = try await cluster.send(.GET, "/data/Person/properties")
            #expect(properties.text.contains(#""relatedTable":"Person""#))
        }
    }

    @Test func refusalsAreClientErrorsAndChangeNothing() async throws {
        try await TestCluster.shared { cluster async throws in
            let ids = try await cluster.createNamed("Person", ["Ann", "Bob"])
            #expect(
                try await cluster.send(.POST, "/data/Person/\(ids[0])/friends:Person:n", #"["\#(ids[1])"]"#).text == "1"
            )
            let tenThousand = "[" + (0..<10_000).map { "\"id\($0)\"" }.joined(separator: ",") + "]"
            let cases: [(HTTPMethod, String, String?, Int)] = [
                (.PUT, "/data/Person/\(ids[0])/friends", tenThousand, 1021),
                (.PUT, "/data/Person/\(ids[0])/x%22%3B%20DROP%20TABLE%20%22Person%22%3B--", #"["\#(ids[1])"]"#, 1020),
                (
                    .PUT, "/data/Person/\(ids[0])/friends%3APerson%22%3B%20DROP%20TABLE%20x%3An", #"["\#(ids[1])"]"#,
                    1020
                ),
                (.PUT, "/data/Person/\(ids[0])/friends", #"{"id": 1}"#, 1022),
                (.PUT, "/data/Person/\(ids[0])/friends", nil, 1022),
                (.PUT, "/data/Person/\(ids[0])/friends?whereClause=name%20%3D", nil, 1017),
                (.PUT, "/data/Person/missing/friends", #"["\#(ids[1])"]"#, 1000),
                (.PUT, "/data/Person/\(ids[0])/enemies", #"["\#(ids[1])"]"#, 1011),
                (.PUT, "/data/Person/\(ids[0])/name", #"["\#(ids[1])"]"#, 1027),
                (.PUT, "/data/Person/\(ids[0])/pets:Pet:n", #"["\#(ids[1])"]"#, 1009),
                (.GET, "/data/Person/\(ids[0])/friends?pageSize=0", nil, 1016),
                (.GET, "/data/Nothing/\(ids[0])/friends", nil, 1009),
            ]
            for (method, path, body, code) in cases {
                let answer = try await cluster.send(method, path, body)
                #expect(answer.json["code"] as? Int == code, "\(method) \(path.prefix(80)): \(answer.text.prefix(200))")
                #expect((400..<500).contains(answer.status), "\(method) \(path.prefix(80))")
            }
            #expect(try await cluster.send(.GET, "/data/Person/\(ids[0])/friends").names() == ["Bob"])
            #expect(try await cluster.send(.GET, "/data/Person/count").text == "2")
        }
    }

    @Test func deepSaveAndRelationsInAUnitOfWorkThroughTheGateway() async throws {
        try await TestCluster.shared { cluster async throws in
            let ids = try await cluster.createNamed("Person", ["Ann"])
            #expect(try await cluster.send(.POST, "/data/Person/\(ids[0])/friends:Person:n", "[]").text == "0")
            let saved = try await cluster.send(
                .PUT, "/data/Person/deep-save",
                #"{"objectId": "\#(ids[0])", "friends": [{"name": "Bob"}, {"name": "Cy"}]}"#)
            #expect(saved.status == 200, "\(saved.text)")
            #expect(((saved.json["friends"] as? [[String: Any]]) ?? []).map { $0["name"] as? String } == ["Bob", "Cy"])
            let work = #"""
                {"operations": [{"operationType": "FIND", "table": "Person", "opResultId": "cy", "payload": {"whereClause": "name = 'Cy'"}},
                 {"operationType": "DELETE_RELATION", "table": "Person", "opResultId": "drop", "payload": {"parentObject": "\#(ids[0])",
                  "relationColumn": "friends", "unconditional": {"___ref": true, "opResultId": "cy"}}}]}
                """#
            let answer = try await cluster.send(.POST, "/transaction/unit-of-work", work)
            #expect(answer.json["success"] as? Bool == true, "\(answer.text)")
            let found = try await cluster.send(.GET, "/data/Person?where=name%3D%27Ann%27&loadRelations=friends")
            let friends = try #require(try JSONSerialization.jsonObject(with: found.body) as? [[String: Any]]).first?[
                "friends"]
            #expect((friends as? [[String: Any]])?.map { $0["name"] as? String } == ["Bob"], "\(found.text)")
        }
    }

    @Test func theGatewayRefusesWhatNoParentCouldAllow() async throws {
        try await TestCluster.shared { cluster async throws in
            let ids = try await cluster.createNamed("Person", ["Ann", "Bob"])
            #expect(
                try await cluster.send(.POST, "/data/Person/\(ids[0])/friends:Person:n", #"["\#(ids[1])"]"#).text == "1"
            )
            let denied = try await cluster.send(
                .PUT, "/data/Person/permissions/DENY", #"{"permission": "LOAD_RELATIONS", "role": "*"}"#,
                key: .serverCode)
            #expect(denied.status == 200, "\(denied.text)")
            let load = try await cluster.send(.GET, "/data/Person/\(ids[0])/friends")
            #expect(load.status == 403 && load.json["code"] as? Int == 1023, "\(load.text)")
            let rules = try await cluster.send(.GET, "/data/Person/permissions", key: .serverCode)
            #expect(rules.text.contains(#""permission":"LOAD_RELATIONS""#), "\(rules.text)")
            #expect(try await cluster.send(.PUT, "/data/Person/\(ids[1])/friends", #"["\#(ids[0])"]"#).text == "1")
        }
    }
}

extension TestCluster {
    /// Creates one object per name in `table` through the gateway; their ids in order.
    func createNamed(_ table: String, _ names: [String]) async throws -> [String] {
        var ids: [String] = []
        for name in names {
            let created = try await send(.POST, "/data/\(table)", #"{"name": "\#(name)"}"#)
            ids.append(try #require(created.json["objectId"] as? String, "\(created.text)"))
        }
        return ids
    }
}

extension HTTPResult {
    /// The `name` of each object of an array answer.
    func names() throws -> [String] {
        let objects = try #require(try JSONSerialization.jsonObject(with: body) as? [[String: Any]], "\(text)")
        return objects.map { $0["name"] as? String ?? "?" }
    }
}
