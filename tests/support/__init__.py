"""What the tests share: archives and lakes they make, servers and processes they start."""
