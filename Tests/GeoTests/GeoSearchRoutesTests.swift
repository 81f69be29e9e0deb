import Foundation
import NIOHTTP1
import TestSupport
import Testing

/// Searches through the gateway in the parameters the 4.x and 5.x SDKs send (contract §5), with
/// the answers their end-to-end tests expect.
@Suite(.timeLimit(.minutes(20))) struct GeoSearchRoutesTests {
    @Test func radiusRectangleCategoryAndMetadataSearches() async throws {
        try await TestCluster.shared { cluster async throws in
            for latitude in 0...3 {
                try await cluster.savePoint(
                    Double(latitude), 0,
                    metadata: #"{"city": "\#(latitude % 2 == 0 ? "Dallas" : "Bongo")", "rank": \#(latitude)}"#)
            }
            // 111,319.9 m is a little over one degree of latitude.
            let degree = 111_319.9
            for (latitude, degrees, count) in [(0, 1.0, 2), (0, 3.0, 4), (2, 2.0, 4), (3, 2.0, 3)] {
                let found = try await cluster.geo(
                    "/geo/points?lat=\(latitude)&lon=0&r=\(degree * degrees)&units=METERS")
                #expect(found.count == count, "\(latitude) ± \(degrees)°: \(found.count)")
            }
            let miles = try await cluster.geo("/geo/points?lat=0&lon=0&r=140&units=MILES&includemetadata=true")
            #expect(miles.count == 3, "\(miles)")
            #expect(miles.map { $0["latitude"] as? Double } == [0, 1, 2], "nearest first")
            #expect(abs((miles[1]["distance"] as? Double ?? 0) - 69.09) < 0.01, "\(miles[1])")
            #expect((miles[0]["metadata"] as? [String: any Sendable])?["city"] as? String == "Dallas")
            #expect(try await cluster.geo("/geo/points?lat=0&lon=0&r=140&units=miles").first?["metadata"] == nil)

            for (nwlat, nwlon, selat, selon, count) in [
                (1, 0, 0, 1, 2), (2, -1, 0, 2, 3), (3, -1, 1, 2, 3), (3, 1, 0, 2, 0),
            ] {
                let found = try await cluster.geo(
                    "/geo/rect?nwlat=\(nwlat)&nwlon=\(nwlon)&selat=\(selat)&selon=\(selon)")
                #expect(found.count == count, "rect \(nwlat),\(nwlon) \(selat),\(selon): \(found.count)")
            }
            #expect(try await cluster.geo("/geo/points?metadata=%7B%22city%22%3A%22Dallas%22%7D").count == 2)
            #expect(try await cluster.geo("/geo/points?where=rank%20%3E%3D%202").count == 2)
            #expect(
                try await cluster.geo("/geo/points?whereClause=city%20LIKE%20%27B%25%27%20AND%20rank%20%3C%203").count
                    == 1)
            #expect(try await cluster.send(.GET, "/geo/count?where=rank%20%3E%200").text == "3")
            let page = try await cluster.geo("/geo/points?lat=0&lon=0&pagesize=2&offset=1")
            #expect(page.map { $0["latitude"] as? Double } == [1, 2], "a center alone orders by distance: \(page)")
        }
    }

    @Test func categorySearchesAsTheSDKTestsSendThem() async throws {
        try await TestCluster.shared { cluster async throws in
            for categories in [["A"], ["B"], ["C", "C", "C"], ["A", "B"], ["C", "B"]] {
                try await cluster.savePoint(10, 10, categories: categories)
            }
            try await cluster.savePoint(5, 5)
            for (query, count) in [("A", 2), ("B", 3), ("C", 2), ("A,C", 4), ("A,B", 4), ("", 1), ("Default,A", 3)] {
                #expect(try await cluster.geo("/geo/points?categories=\(query)").count == count, "categories=\(query)")
            }
            #expect(try await cluster.geo("/geo/points").count == 1, "no categories: Default")
        }
    }

    @Test func clustersAsTheSDKTestsExpectThem() async throws {
        try await TestCluster.shared { cluster async throws in
            try await cluster.savePoint(30, 10, metadata: #"{"city": "Dallas"}"#)
            try await cluster.savePoint(30, 50, metadata: #"{"city": "Dallas"}"#)
            try await cluster.savePoint(30, 55, metadata: #"{"city": "Bongo", "country": "Dongo"}"#)
            let coarse = try await cluster.geo("/geo/points?dpp=1&clustergridsize=20")
            #expect(coarse.count == 2, "\(coarse)")
            #expect(coarse.first?["longitude"] as? Double == 10 && coarse.first?["totalPoints"] == nil)
            let pair = try #require(coarse.last)
            #expect(
                pair["totalPoints"] as? Int == 2 && pair["longitude"] as? Double == 52.5
                    && pair["latitude"] as? Double == 30)
            #expect(try await cluster.geo("/geo/points?dpp=1&clustergridsize=1").count == 3)

            // A cluster's points and metadata, with the query the SDK sends again.
            let id = try #require(pair["objectId"] as? String)
            let members = try await cluster.geo(
                "/geo/clusters/\(id)/points?dpp=1&clustergridsize=20&includemetadata=true")
            #expect(Set(members.compactMap { $0["longitude"] as? Double }) == [50, 55], "\(members)")
            let merged = try await cluster.send(.GET, "/geo/points/\(id)/metadata?dpp=1&clustergridsize=20")
            #expect(
                Set(merged.json["city"] as? [String] ?? []) == ["Dallas", "Bongo"]
                    && merged.json["country"] as? String == "Dongo", "\(merged.text)")
            let whole = try await cluster.geo("/geo/points?dpp=1&clustergridsize=180&includemetadata=true")
            #expect(whole.count == 1 && whole[0]["totalPoints"] as? Int == 3)
            #expect((whole[0]["metadata"] as? [String: any Sendable])?["country"] as? String == "Dongo")
            #expect(try await cluster.geo("/geo/points?dpp=1&clustergridsize=180")[0]["metadata"] == nil)
            #expect(try await cluster.send(.GET, "/geo/clusters/nonsense/points").json["code"] as? Int == 4009)
            #expect(
                try await cluster.send(.GET, "/geo/clusters/cluster_0_0_1e-300/points").json["code"] as? Int == 4009)
            #expect(
                try await cluster.send(.GET, "/geo/points/cluster_0_0_20.0/metadata?dpp=1&clustergridsize=20").json[
                    "code"] as? Int == 4009)
        }
    }

    @Test func clustersByCategoryAsTheSDKTestsExpectThem() async throws {
        try await TestCluster.shared { cluster async throws in
            for offset in 0..<10 {
                try await cluster.savePoint(30, Double(10 + offset), categories: [offset % 2 == 1 ? "even" : "odd"])
            }
            // setClusteringParams(10, 20, 1000, 500): 0.01 degrees per pixel, 500-pixel cells.
            let even = try await cluster.geo("/geo/points?categories=even&dpp=0.01&clustergridsize=500")
            #expect(
                even.map { $0["longitude"] as? Double } == [12, 17]
                    && even.map { $0["totalPoints"] as? Int } == [2, 3], "\(even)")
            #expect(even.allSatisfy { $0["categories"] as? [String] == ["even"] })
            let both = try await cluster.geo("/geo/points?categories=even,odd&dpp=0.1&clustergridsize=100")
            #expect(
                both.count == 1 && both[0]["longitude"] as? Double == 14.5 && both[0]["totalPoints"] as? Int == 10,
                "\(both)")
            #expect(both[0]["categories"] as? [String] == ["even", "odd"])
        }
    }

    @Test func relativeFindAnswersEachPointsMatchPercentage() async throws {
        try await TestCluster.shared { cluster async throws in
            try await cluster.savePoint(1, 1, metadata: #"{"colour": "red", "size": 3, "shape": "round"}"#)
            try await cluster.savePoint(1, 2, metadata: #"{"colour": "red", "size": 4}"#)
            try await cluster.savePoint(1, 3, metadata: #"{"colour": "blue"}"#)
            let wanted = #"{"colour":"red","size":3,"shape":"round"}"#.addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)!
            let found = try await cluster.geo(
                "/geo/relative/points?relativeFindMetadata=\(wanted)&relativeFindPercentThreshold=30")
            let matches = found.map {
                (
                    ($0["geoPoint"] as? [String: any Sendable])?["longitude"] as? Double ?? 0,
                    $0["matches"] as? Double ?? 0
                )
            }
            try #require(matches.count == 2, "\(found)")
            #expect(matches[0].0 == 1 && matches[0].1 == 100 && matches[1].0 == 2, "\(found)")
            #expect(abs(matches[1].1 - 100.0 / 3) < 1e-9)
            let rect = try await cluster.geo(
                "/geo/relative/rect?nwlat=2&nwlon=1.5&selat=0&selon=3&relativeFindMetadata=\(wanted)&relativeFindPercentThreshold=100"
            )
            #expect(rect.isEmpty, "\(rect)")
            let missing = try await cluster.send(.GET, "/geo/relative/points?relativeFindMetadata=\(wanted)")
            #expect(missing.status == 400 && missing.json["code"] as? Int == 4001)
        }
    }

    @Test func badSearchParametersAreClientErrors() async throws {
        try await TestCluster.shared { cluster async throws in
            try await cluster.savePoint(1, 1)
            let refusals: [(String, Int)] = [
                ("/geo/points?lat=91&lon=0&r=10", 4001), ("/geo/points?lat=0&lon=-181&r=10", 4001),
                ("/geo/points?lat=NaN&lon=0&r=10", 4001), ("/geo/points?lat=0&lon=0&r=0", 4001),
                ("/geo/points?lat=0&lon=0&r=-5", 4001), ("/geo/points?lat=0&lon=0&r=20016&units=KILOMETERS", 4001),
                ("/geo/points?lat=0&lon=0&r=1&units=LEAGUES", 4001), ("/geo/points?r=10", 4001),
                ("/geo/points?lat=1", 4001),
                ("/geo/points?pagesize=0", 4001), ("/geo/points?pagesize=1001", 4001), ("/geo/points?offset=-1", 4001),
                ("/geo/points?metadata=%7Bcity", 4001), ("/geo/points?metadata=%5B1%5D", 4001),
                ("/geo/points?where=city%20%3D", 4003), ("/geo/points?where=a%20%2B%201%20%3E%202", 4003),
                ("/geo/points?where=Person%5Bfriends%5D.name%20%3D%20%27x%27", 4003),
                ("/geo/rect?nwlat=1&nwlon=0&selat=2&selon=1", 4001), ("/geo/rect?nwlat=1&nwlon=0", 4001),
                ("/geo/rect?nwlat=1&nwlon=0&selat=0&selon=1&lat=0&lon=0&r=5", 4001),
                ("/geo/points?dpp=0", 4001), ("/geo/points?dpp=1&clustergridsize=361", 4001),
                // Cells so small a column outgrew PostgreSQL's 64-bit numbers (schemathesis sent them).
                ("/geo/points?dpp=2.2250738585072014e-308&clustergridsize=1", 4001),
                ("/geo/points?includemetadata=yes", 4001), ("/geo/points?categories=a%01", 4005),
                ("/geo/points?relativeFindPercentThreshold=101&relativeFindMetadata=%7B%22a%22%3A1%7D", 4001),
                ("/geo/points?lat=%ZZ", 4001),
            ]
            for (path, code) in refusals {
                let answer = try await cluster.send(.GET, path)
                #expect(
                    answer.status == 400 && answer.json["code"] as? Int == code,
                    "\(path): \(answer.status) \(answer.text)")
            }
        }
    }
}
