print("child")
