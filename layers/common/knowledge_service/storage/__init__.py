"""Everything that touches AWS. Only this package imports boto3.

Each store takes its boto3 resource or client in its constructor (tests hand in moto's);
``StoreSet.from_environment`` builds the real ones once per container.
"""
