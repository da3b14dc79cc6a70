import CJSONC
public func jsonVersion() -> String { String(cString: json_c_version()) }
