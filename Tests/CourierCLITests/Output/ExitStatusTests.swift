import Testing

@testable import courier

@Suite struct ExitStatusTests {
    @Test(
        arguments: [
            (200, false, Int32?.none), (204, false, nil), (301, false, 3), (302, true, nil), (404, false, 4),
            (418, true, 4), (500, false, 5), (503, true, 5),
        ]
    )
    func mapsStatusClasses(status: Int, follows: Bool, expected: Int32?) {
        let checked = ExitStatus.checked(statusCode: status, reason: "R", followsRedirects: follows)
        #expect(checked?.code == expected)
        if let checked { #expect(checked.message.hasPrefix("HTTP \(status) R")) }
    }
}
