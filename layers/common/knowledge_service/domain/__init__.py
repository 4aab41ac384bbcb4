"""What the service does, with no HTTP and no boto3 in it."""
