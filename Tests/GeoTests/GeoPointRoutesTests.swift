import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Points and categories through the gateway (contract §5), as the 4.x and 5.x SDKs call them.
@Suite(.timeLimit(.minutes(20))) struct GeoPointRoutesTests {
    @Test func savingReplacingPatchingAndDeletingAPoint() async throws {
        try await TestCluster.shared { cluster async throws in
            // Categories default to Default, are deduplicated and sorted; metadata comes back.
            let saved = try await cluster.send(
                .POST, "/geo/points",
                #"{"latitude": 21.3, "longitude": -157.85, "categories": ["Foo", "Bar", "Foo"], "metadata": {"name": "Starbucks", "parking": "true", "seats": 12}}"#
            )
            let point = try #require(saved.json["geopoint"] as? [String: any Sendable], "\(saved.text)")
            let id = try #require(point["objectId"] as? String)
            #expect(point["categories"] as? [String] == ["Bar", "Foo"])
            #expect(point["latitude"] as? Double == 21.3 && point["longitude"] as? Double == -157.85)
            #expect((point["metadata"] as? [String: any Sendable])?["seats"] as? Int == 12)
            let plain = try await cluster.send(
                .POST, "/geo/points", #"{"latitude": 1, "longitude": 2, "categories": []}"#)
            #expect(
                (plain.json["geopoint"] as? [String: any Sendable])?["categories"] as? [String] == ["Default"],
                "\(plain.text)")

            // PATCH: null categories and missing metadata keep; {} metadata clears.
            let patched = try await cluster.send(
                .PATCH, "/geo/points/\(id)", #"{"latitude": 22, "longitude": -158, "categories": null}"#)
            let afterPatch = try #require(patched.json["geopoint"] as? [String: any Sendable], "\(patched.text)")
            #expect(afterPatch["categories"] as? [String] == ["Bar", "Foo"] && afterPatch["latitude"] as? Double == 22)
            #expect((afterPatch["metadata"] as? [String: any Sendable])?["name"] as? String == "Starbucks")
            let cleared = try await cluster.send(.PATCH, "/geo/points/\(id)", #"{"metadata": {}}"#)
            #expect(
                ((cleared.json["geopoint"] as? [String: any Sendable])?["metadata"] as? [String: any Sendable])?.isEmpty
                    == true)
            #expect((try await cluster.send(.GET, "/geo/points/\(id)").json["latitude"] as? Double) == 22)

            // PUT replaces: missing categories are Default again.
            let replaced = try await cluster.send(
                .PUT, "/geo/points/\(id)", #"{"latitude": -33.9, "longitude": 151.2, "metadata": {"city": "Sydney"}}"#)
            #expect(
                (replaced.json["geopoint"] as? [String: any Sendable])?["categories"] as? [String] == ["Default"],
                "\(replaced.text)")
            #expect(try await cluster.send(.GET, "/geo/points/\(id)/metadata").json["city"] as? String == "Sydney")
            // A save naming a known objectId updates it (the SDK's save of a fetched point).
            let resaved = try await cluster.send(
                .POST, "/geo/points", #"{"objectId": "\#(id)", "latitude": 10, "longitude": 10}"#)
            #expect((resaved.json["geopoint"] as? [String: any Sendable])?["objectId"] as? String == id)

            #expect(try await cluster.send(.DELETE, "/geo/points/\(id)").json["result"] as? Bool == true)
            for (method, path) in [
                (HTTPMethod.DELETE, "/geo/points/\(id)"), (.GET, "/geo/points/\(id)"),
                (.GET, "/geo/points/\(id)/metadata"),
            ] {
                let missing = try await cluster.send(method, path)
                #expect(
                    missing.status == 404 && missing.json["code"] as? Int == 4008, "\(method) \(path): \(missing.text)")
            }
            let patchMissing = try await cluster.send(.PATCH, "/geo/points/\(id)", #"{"latitude": 1, "longitude": 1}"#)
            #expect(patchMissing.status == 404 && patchMissing.json["code"] as? Int == 4008)
        }
    }

    @Test func categoriesAreListedCreatedAndDeletedWithTheirPoints() async throws {
        try await TestCluster.shared { cluster async throws in
            let first = try await cluster.send(.PUT, "/geo/categories/Foo")
            let again = try await cluster.send(.PUT, "/geo/categories/Foo")
            #expect(
                first.status == 200 && first.json["name"] as? String == "Foo" && first.json["objectId"] is String,
                "\(first.text)")
            #expect(first.text == again.text)
            let only = try await cluster.savePoint(1, 1, categories: ["Taxi"])
            let shared = try await cluster.savePoint(2, 2, categories: ["Taxi", "Home"])
            try await cluster.savePoint(3, 3)
            let listed = try await cluster.geo("/geo/categories")
            let sizes = Dictionary(
                uniqueKeysWithValues: listed.map { ($0["name"] as? String ?? "", $0["size"] as? Int ?? -1) })
            #expect(sizes == ["Default": 1, "Foo": 0, "Taxi": 2, "Home": 1], "\(listed)")
            #expect(listed.first?["name"] as? String == "Default")

            #expect(try await cluster.send(.DELETE, "/geo/categories/Taxi").json["result"] as? Bool == true)
            // The point only in Taxi goes; the other keeps Home.
            #expect(try await cluster.send(.GET, "/geo/points/\(only)").status == 404)
            #expect(try await cluster.send(.GET, "/geo/points/\(shared)").json["categories"] as? [String] == ["Home"])

            let refusals: [(HTTPMethod, String, Int, Int)] = [
                (.PUT, "/geo/categories/default", 409, 4006), (.DELETE, "/geo/categories/Default", 409, 4006),
                (.DELETE, "/geo/categories/Nothing", 404, 4007), (.PUT, "/geo/categories/a%2Cb", 400, 4005),
                (.PUT, "/geo/categories/%20", 400, 4005),
                (.PUT, "/geo/categories/" + String(repeating: "x", count: 101), 400, 4005),
                (.PUT, "/geo/categories/a%01b", 400, 4005),
            ]
            for (method, path, status, code) in refusals {
                let answer = try await cluster.send(method, path)
                #expect(
                    answer.status == status && answer.json["code"] as? Int == code,
                    "\(method) \(path): \(answer.status) \(answer.text)")
            }
            #expect(try await cluster.geo("/geo/categories").count == 3)
        }
    }

    @Test func badPointsAreRefusedAndNothingIsSaved() async throws {
        try await TestCluster.shared { cluster async throws in
            let bodies: [(String, Int)] = [
                (#"{"latitude": 100, "longitude": 10}"#, 4001), (#"{"latitude": -90.0001, "longitude": 10}"#, 4001),
                (#"{"latitude": 10, "longitude": 180.5}"#, 4001), (#"{"latitude": 10, "longitude": -1e400}"#, 4002),
                (#"{"latitude": "NaN", "longitude": 10}"#, 4002), (#"{"longitude": 10}"#, 4002), (#"{}"#, 4002),
                (#"{"latitude": 1, "longitude": 1, "metadata": [1]}"#, 4002),
                (#"{"latitude": 1, "longitude": 1, "metadata": {"a": {"b": 1}}}"#, 4002),
                (#"{"latitude": 1, "longitude": 1, "categories": [1]}"#, 4002),
                (#"{"latitude": 1, "longitude": 1, "categories": ["a,b"]}"#, 4005),
                (#"{"latitude": 1, "longitude": 1"#, 4002), ("[]", 4002), ("", 4002),
            ]
            for (body, code) in bodies {
                let answer = try await cluster.send(.POST, "/geo/points", body)
                #expect(
                    answer.status == 400 && answer.json["code"] as? Int == code,
                    "\(body): \(answer.status) \(answer.text)")
            }
            #expect(try await cluster.send(.GET, "/geo/count?categories=Default,a").text == "0")
        }
    }
}
