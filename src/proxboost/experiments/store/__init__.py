"""The stored rows: their files and identities (`results`), the names of methods and columns
(`naming`), and the row claims that keep two concurrent sweeps from computing a row twice."""
