@main struct BlesimMain { static func main() { print("blesim: not yet") } }
